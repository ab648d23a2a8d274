"""`GET /api/v1/processing?flow=F`: how many messages wait at each stage queue of a flow, as the bus counts
them, so that `tg-show-processing` can say what is still pending. The gateway asks the bus because no
processor sees the other processors' queues; where the bus cannot count (Pulsar) a stage says null."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from tracegraph.base.bus.protocol import Backend
from tracegraph.base.bus.topic import Topic
from tracegraph.base.errors import ConfigError


def stage_topics(bindings: Mapping[str, str], flow_id: str) -> dict[Topic, list[str]]:
    """Each persistent flow queue of `flow_id` and the processors bound to it, from the `active-flow`
    config values (processor name -> JSON of flow id -> {"topics": spec -> topic or request/response})."""
    stages: dict[Topic, list[str]] = {}
    for processor, text in sorted(bindings.items()):
        binding = json.loads(text).get(flow_id)
        if not binding:
            continue
        for topic_text in binding.get("topics", {}).values():
            if not isinstance(topic_text, str) or "://" not in topic_text:
                continue  # a parameter, or a request/response pair (answered at once, not a queue)
            topic = Topic.parse(topic_text)
            if topic.persistent and topic.kind == "flow":
                stages.setdefault(topic, []).append(processor)
    if not stages:
        raise ConfigError(f"no running flow {flow_id!r} with stage queues")
    return stages


def queue_label(topic: Topic) -> str:
    """The stage's name without its flow: `persistent://tg/flow/chunk-load:default` -> `chunk-load`.

    >>> queue_label(Topic.parse("persistent://tg/flow/chunk-load:default"))
    'chunk-load'
    """
    return topic.name.rsplit(":", 1)[0]


async def stage_backlogs(backend: Backend, bindings: Mapping[str, str], flow_id: str) -> list[dict[str, Any]]:
    """One row per (queue, consuming processor): {"queue", "processor", "waiting", "consumers"}, waiting
    None where the bus cannot tell. A processor that only publishes to a queue has no subscription there
    and is left out; where the bus cannot tell who subscribes, each queue is one row with processor "".
    """
    rows: list[dict[str, Any]] = []
    for topic, processors in sorted(stage_topics(bindings, flow_id).items(), key=lambda item: item[0].name):
        label = queue_label(topic)
        counts = [(p, await backend.backlog(topic, p), await backend.consumers(topic, p)) for p in processors]
        if any(waiting is None for _, waiting, _ in counts):
            rows.append({"queue": label, "processor": "", "waiting": None, "consumers": None})
            continue
        rows += [{"queue": label, "processor": p, "waiting": waiting, "consumers": consumers}
                 for p, waiting, consumers in counts if waiting or consumers]
    return rows
