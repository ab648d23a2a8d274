"""Topic names keep Pulsar's shape; each backend maps them in one tested function."""

import pytest

from tracegraph.base.bus.rabbitmq import REQUEST_QUEUE_EXPIRES_MS, attempt_of, queue_arguments, queue_name
from tracegraph.base.bus.topic import Topic, request_topic
from tracegraph.base.errors import BusError, TopicNotFound


def test_parse_and_print_round_trip():
    text = "persistent://tg/flow/chunk-load:default"
    topic = Topic.parse(text)
    assert (topic.persistent, topic.tenant, topic.kind, topic.name) == (True, "tg", "flow", "chunk-load:default")
    assert str(topic) == text
    assert Topic.parse(text) == topic and hash(Topic.parse(text)) == hash(topic)


def test_request_topics_are_non_persistent():
    assert str(request_topic("graph-rag", "default")) == "non-persistent://tg/request/graph-rag:default"
    assert not request_topic("config").persistent


@pytest.mark.parametrize("bad", ["", "flow/x", "persistent://tg/flow", "http://tg/flow/x", "persistent://tg/flow/a b"])
def test_bad_names_are_refused_clearly(bad):
    with pytest.raises(TopicNotFound, match="not a topic name"):
        Topic.parse(bad)


def test_rabbitmq_queue_per_topic_and_subscription():
    topic = Topic.parse("persistent://tg/flow/chunk-load:default")
    assert queue_name(topic, "chunker") == "tg.flow.chunk-load:default.chunker"
    assert queue_arguments(topic) == {"x-queue-type": "quorum"}
    assert queue_arguments(Topic.parse("non-persistent://tg/request/x:y")) == {"x-expires": REQUEST_QUEUE_EXPIRES_MS}
    assert queue_arguments(Topic.parse("non-persistent://tg/response/x:y")) == {}
    with pytest.raises(BusError, match="255"):
        queue_name(topic, "s" * 300)


def test_rabbitmq_attempt_comes_from_the_broker():
    assert attempt_of({"x-delivery-count": 2}, True) == 3
    assert attempt_of({}, False) == 1
    assert attempt_of({}, True) == 2
