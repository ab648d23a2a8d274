"""`tg-load-text --in-flight N`: never more than N documents between their add-document request and
their add-processing answer, all N used when there are more documents, and a failure that stops the
load named as one error (exit 1), not an exception group."""

from __future__ import annotations

import argparse
import asyncio

import pytest

from tracegraph.base.errors import RemoteError
from tracegraph.cli import _client
from tracegraph.cli.load_documents import chunks_postfix, main_text
from tracegraph.cli.submission import in_flight_count, submit_bounded


class FakeLibrary:
    """The librarian behind a fake gateway: counts documents in flight (added, not yet sent to a flow)."""

    def __init__(self, fail_on: str | None = None) -> None:
        self.in_flight = self.most = self.processed = 0
        self.fail_on = fail_on

    def __call__(self, url: str, token: str | None) -> "FakeLibrary":  # stands in for Api(url, token)
        return self

    async def request(self, path: str, body: dict) -> dict:
        assert path == "librarian"
        await asyncio.sleep(0.001)  # a round trip: others get their turn
        if body["operation"] == "add-document":
            meta = body["document-metadata"]
            if meta["path"] == self.fail_on:
                raise RemoteError("invalid-argument", f"{meta['path']}: refused")
            self.in_flight += 1
            self.most = max(self.most, self.in_flight)
            return {"document-metadata": {**meta, "id": f"urn:doc:{meta['path']}", "size": 1}}
        assert body["operation"] == "add-processing"
        await asyncio.sleep(0.002)
        self.in_flight -= 1
        self.processed += 1
        return {}


@pytest.fixture
def folder(tmp_path):
    for i in range(20):
        (tmp_path / f"n{i:02}.md").write_text(f"note {i}")
    return tmp_path


@pytest.mark.parametrize("limit", [1, 3, 8])
def test_no_more_than_in_flight_documents_are_outstanding(folder, monkeypatch, capsys, limit):
    library = FakeLibrary()
    monkeypatch.setattr(_client, "Api", library)
    assert main_text([str(folder), "--in-flight", str(limit)]) == 0
    assert library.processed == 20 and library.most == limit  # bounded, and the bound is used
    out = capsys.readouterr().out
    assert out.count("→ flow default") == 20 and "n07.md: urn:doc:n07.md (1 bytes) → flow default" in out


def test_a_refused_document_stops_the_load_with_one_error_line(folder, monkeypatch, capsys):
    monkeypatch.setattr(_client, "Api", FakeLibrary(fail_on="n05.md"))
    assert main_text([str(folder), "--in-flight", "4"]) == 1
    err = capsys.readouterr().err
    assert "tg-load-text: error:" in err and "n05.md: refused" in err and "ExceptionGroup" not in err


async def test_results_keep_the_order_of_the_items_whatever_order_they_finish_in():
    async def submit(delay: int) -> int:
        await asyncio.sleep(delay / 1000)
        return delay
    heard: list[int] = []
    assert await submit_bounded([5, 1, 3, 0], 4, submit, lambda item, result: heard.append(item)) == [5, 1, 3, 0]
    assert heard == [0, 1, 3, 5]  # as each finished


def test_in_flight_must_be_at_least_one():
    assert in_flight_count("2") == 2
    for bad in ("0", "-1", "many"):
        with pytest.raises(argparse.ArgumentTypeError, match="at least 1"):
            in_flight_count(bad)


def test_the_progress_line_names_the_chunks_extracted():
    assert chunks_postfix(3, 7) == "chunks 3/7 extracted"
    assert chunks_postfix(0, 0) == "no chunk records yet"
