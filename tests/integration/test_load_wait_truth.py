"""`tg-load-text --wait` on a real stack tells each document's outcome: a document whose extraction
failed is named with the reason and the command exits 1, while the good document is reported done."""

from __future__ import annotations

import json
import re

import pytest

from support.ingest import ingest_stack
from support.openai_stub import OpenAIStub
from support.procs import tg_async

pytestmark = pytest.mark.timeout(300)

GOOD = json.dumps({"entities": [{"name": "Helios Grid", "definition": "A regional energy operator."}],
                   "relationships": [{"subject": "Helios Grid", "predicate": "depends on",
                                      "object": "Corvid Analytics"}]})


def reply(body: dict) -> str:
    """Malformed JSON for every request about Orbis (so its one chunk fails), good facts otherwise."""
    return "not json at all" if "Orbis" in json.dumps(body) else GOOD


@pytest.fixture
def documents(tmp_path):
    """Two one-chunk documents: one the stub extracts, one it answers with malformed JSON."""
    (tmp_path / "helios.md").write_text("Helios Grid depends on Corvid Analytics.")
    (tmp_path / "orbis.md").write_text("Orbis Systems runs the Orbis Cloud.")
    return tmp_path


async def test_wait_names_the_failed_document_and_exits_1_while_the_good_one_is_done(documents):
    tmp_path = documents
    async with OpenAIStub(replies=[reply] * 40) as stub:
        async with ingest_stack(tmp_path / "data", llm_url=stub.base_url, llm_model="stub-model",
                                extractor="llm") as (api, _):
            code, out, err = await tg_async("tg-load-text", "-u", api.url, str(tmp_path / "helios.md"),
                                            str(tmp_path / "orbis.md"), "--wait", "--timeout", "120")
    assert code == 1, (out, err)
    assert re.search(r"^failed: \S*orbis\.md \(urn:\S+\): 1 of 1 chunk\(s\) not fully processed: "
                     r"kg-extract: no valid JSON", out, re.M), out
    assert re.search(r"^done: \S*helios\.md \(urn:\S+\): 1 chunk\(s\)$", out, re.M), out
    assert "1 failed of 2 document(s)" in err and "extraction finished" not in out


async def test_a_document_the_chunker_gave_up_on_is_named_not_waited_for(documents, monkeypatch):
    """No chunk records at all: the chunker's give-up, recorded on the document, ends the wait."""
    from tracegraph.base.errors import ServiceUnavailable
    from tracegraph.flow import chunker

    def pages(content: bytes, kind: str):
        if b"Orbis" in content:
            raise ServiceUnavailable("scripted: the store is away")
        return read_pages(content, kind)

    read_pages = chunker.read_pages
    monkeypatch.setattr(chunker, "read_pages", pages)
    async with ingest_stack(documents / "data", max_attempts=2, retry_backoff=0.1) as (api, _):
        code, out, err = await tg_async("tg-load-text", "-u", api.url, str(documents / "helios.md"),
                                        str(documents / "orbis.md"), "--wait", "--timeout", "60")
    assert code == 1, (out, err)
    assert re.search(r"^failed: \S*orbis\.md \(urn:\S+\): chunker: after 2 attempts", out, re.M), out
    assert re.search(r"^done: \S*helios\.md \(urn:\S+\): \d+ chunk\(s\)$", out, re.M), out
    assert "1 failed of 2 document(s)" in err
