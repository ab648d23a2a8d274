"""`--wait`'s per-document rules: a document with no chunk record keeps the wait going, a recorded
failure ends it with that document named, and every document gets one line saying what became of it."""

from __future__ import annotations

import re

import pytest

from tracegraph.base.errors import ConfigError
from tracegraph.cli.document_settle import DocumentState
from tracegraph.cli.library_upload import settle, wait_for_extraction


class FakeApi:
    """Answers the progress and failure queries per document from a script: `progress[doc]` is the
    (chunks, done) of successive polls (the last repeats), `failures[doc]` the recorded failures."""

    def __init__(self, progress: dict[str, list[tuple[int, int]]], failures: dict[str, list[tuple[str, str]]]):
        self.progress, self.failures = progress, failures
        self.polls: dict[str, int] = {}

    async def flow_service(self, flow: str, service: str, request: dict) -> dict:
        assert service == "sparql"
        document = re.search(r"<(urn:doc:[^>]+)>", request["query"]).group(1)
        if "COUNT" in request["query"]:
            seen = self.polls.get(document, 0)
            self.polls[document] = seen + 1
            chunks, done = self.progress[document][min(seen, len(self.progress[document]) - 1)]
            return {"bindings": [{"chunks": {"v": str(chunks)}, "done": {"v": str(done)}}]}
        return {"bindings": [{"chunk": {"i": chunk}, "error": {"v": error}}
                             for chunk, error in self.failures.get(document, [])]}


async def test_a_document_without_chunk_records_keeps_the_wait_going_until_the_timeout():
    api = FakeApi({"urn:doc:good": [(2, 2)], "urn:doc:lost": [(0, 0)]}, {})
    settlement = await settle(api, "default", ["urn:doc:good", "urn:doc:lost"], "default", timeout=1.0)
    assert settlement.timed_out and [s.document for s in settlement.unsettled] == ["urn:doc:lost"]
    assert api.polls["urn:doc:lost"] >= 3  # polled again and again, not taken as finished
    assert api.polls["urn:doc:good"] == 2  # a settled document is not polled any more
    lines = {s.document: s.line({"urn:doc:lost": "notes/lost.md"}) for s in settlement.documents}
    assert lines["urn:doc:lost"] == "not finished: notes/lost.md (urn:doc:lost): no chunk records yet"
    assert lines["urn:doc:good"] == "done: urn:doc:good: 2 chunk(s)"
    with pytest.raises(ConfigError, match=r"not finished after 1s: urn:doc:lost: no chunk records yet"):
        await wait_for_extraction(FakeApi({"urn:doc:good": [(2, 2)], "urn:doc:lost": [(0, 0)]}, {}),
                                  "default", ["urn:doc:good", "urn:doc:lost"], "default", timeout=1.0)


async def test_a_document_level_failure_ends_the_wait_with_that_document_named():
    api = FakeApi({"urn:doc:bad": [(0, 0)]}, {"urn:doc:bad": [("urn:doc:bad", "chunker: after 10 attempts: gave up")]})
    settlement = await settle(api, "default", ["urn:doc:bad"], "default", timeout=30)
    assert not settlement.timed_out and not settlement.ok
    [state] = settlement.failed
    assert state.line({"urn:doc:bad": "bad.md"}) == "failed: bad.md (urn:doc:bad): chunker: after 10 attempts: gave up"


async def test_a_failed_chunk_is_reported_on_its_document_once_every_chunk_settled():
    api = FakeApi({"urn:doc:a": [(1, 0), (3, 2), (3, 3)], "urn:doc:b": [(1, 1)]},
                  {"urn:doc:a": [("urn:chunk:a/2", "kg-extract: no valid JSON after 3 attempts")]})
    settlement = await settle(api, "default", ["urn:doc:a", "urn:doc:b"], "default", timeout=30)
    assert not settlement.unsettled and [s.document for s in settlement.failed] == ["urn:doc:a"]
    assert settlement.documents[0].line() == ("failed: urn:doc:a: 1 of 3 chunk(s) not fully processed: "
                                              "kg-extract: no valid JSON after 3 attempts")
    assert settlement.indexable_chunks == 4  # a failed extraction still has its chunk vector


def test_a_growing_chunk_count_restarts_the_stability_count():
    state = DocumentState("urn:doc:a")
    state.observe(2, 2)
    state.observe(4, 2)
    state.observe(4, 4)
    assert not state.settled
    state.observe(4, 4)
    assert state.settled


async def test_each_poll_tells_how_many_documents_have_settled_for_the_progress_line():
    api = FakeApi({"urn:doc:a": [(1, 1)], "urn:doc:b": [(2, 0), (2, 1), (2, 2)]}, {})
    heard: list[tuple[int, int]] = []
    await settle(api, "default", ["urn:doc:a", "urn:doc:b"], "default", timeout=30,
                 on_settled=lambda settled, total: heard.append((settled, total)))
    assert heard[0] == (0, 2) and (1, 2) in heard and heard[-1] == (2, 2)
    assert [count for count, _ in heard] == sorted(count for count, _ in heard)  # never goes back
