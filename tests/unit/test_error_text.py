"""An error that crosses the bus reaches the user once, without server paths; the log keeps the detail."""

from __future__ import annotations

import logging
from types import SimpleNamespace

from tracegraph.base.error_text import public_message, without_paths
from tracegraph.base.errors import RemoteError, TransientError
from tracegraph.base.flow import Runner
from tracegraph.base.stores.oxigraph import _cannot_open
from tracegraph.base.stores.protocol import CollectionRef
from tracegraph.flow.gateway.refusals import failure_of

LOCKED = "IO error: While lock file: /srv/tg-data/triples/default/default/LOCK: Resource temporarily unavailable"


class RecordingRunner(Runner):
    """A runner whose refusals are kept rather than published."""

    def __init__(self, processor: str) -> None:
        self.processor = SimpleNamespace(name=processor, stats=SimpleNamespace(failed=0))
        self.spec = SimpleNamespace(name="request")
        self.sent = []

    async def refuse(self, delivery, error) -> None:
        self.sent.append(error)


async def test_a_relayed_unavailable_error_is_said_once_and_without_the_path(caplog):
    """The triples service answered `unavailable`; graph-rag relays it to the gateway."""
    runner = RecordingRunner("graph-rag")
    nested = RemoteError("unavailable", f"unavailable: oxigraph store default/default: {LOCKED}")
    with caplog.at_level(logging.INFO, logger="tracegraph.base.flow"):
        await runner.fail(None, nested)
    [error] = runner.sent
    assert error.type == "unavailable"
    assert error.message == ("oxigraph store default/default: IO error: While lock file: …/LOCK: "
                             "Resource temporarily unavailable")
    assert str(RemoteError(error.type, error.message)).count("unavailable:") == 1  # what the CLI prints
    assert "/srv/tg-data/triples/default/default/LOCK" in caplog.text


async def test_a_local_error_keeps_its_kind_out_of_the_message(caplog):
    runner = RecordingRunner("triples")
    with caplog.at_level(logging.INFO, logger="tracegraph.base.flow"):
        await runner.fail(None, TransientError(f"oxigraph store default/default: {LOCKED}"))
    assert runner.sent[0].message == ("oxigraph store default/default: IO error: While lock file: …/LOCK: "
                                      "Resource temporarily unavailable")
    assert "/srv/tg-data" in caplog.text


def test_a_remote_error_of_another_kind_keeps_that_kind():
    assert public_message("graph-rag-error", RemoteError("bad-query", "no such predicate")) == \
        "bad-query: no such predicate"


def test_the_gateway_answers_a_doubled_kind_once_and_without_paths():
    failure = failure_of(RemoteError("unavailable", "unavailable: unavailable: store /var/lib/tg/x/LOCK: busy"))
    assert (failure.status, failure.type, failure.message) == (503, "unavailable", "store …/LOCK: busy")


def test_urls_iris_and_topics_are_not_paths():
    for text in ("cannot reach Qdrant at http://127.0.0.1:6333/collections/x",
                 "no service is consuming non-persistent://tg/request/graph-rag:default",
                 "unknown entity <https://trustgraph.ai/r/depends-on> in default/default"):
        assert without_paths(text) == text


def test_a_locked_store_says_what_to_do_and_logs_the_path(caplog):
    with caplog.at_level(logging.WARNING, logger="tracegraph.base.stores.oxigraph"):
        error = _cannot_open(CollectionRef("default", "default"), OSError(LOCKED))
    assert isinstance(error, TransientError)
    assert "/srv" not in str(error) and "locked by another process" in str(error) and "--data-dir" in str(error)
    assert "/srv/tg-data/triples/default/default/LOCK" in caplog.text
