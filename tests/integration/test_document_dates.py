"""A document's own date, from the CLI or the librarian request to every chunk: checked and made
canonical when the document is added, or found by the chunker in a dating line of its text."""

from __future__ import annotations

import base64

import pytest

from tracegraph.base.errors import RemoteError
from tracegraph.base.provenance.vocab import TG
from tracegraph.cli.library_upload import add_document, process, wait_for_extraction
from tracegraph.schemas.ingest import TextChunk, Triples

from support.observe import observed
from support.ingest import ingest_stack
from support.procs import tg_async

pytestmark = pytest.mark.timeout(300)

MEMO = "# Grid memo\n\nDate: 12 March 2025\n\nHelios Grid depends on Corvid Analytics.\n"
UNDATED = "Helios Grid depends on Corvid Analytics. Ada Lovelace was born on 10 December 1815.\n"


async def add(api, content: str, **metadata) -> dict:
    return (await api.request("librarian", {
        "operation": "add-document", "content": base64.b64encode(content.encode()).decode(),
        "document-metadata": {"kind": "text/markdown", **metadata}}))["document-metadata"]


async def test_the_librarian_refuses_a_bad_date_and_keeps_a_good_one_canonical(tmp_path):
    async with ingest_stack(tmp_path) as (api, _):
        with pytest.raises(RemoteError, match=r"librarian-error: date: 'last spring' is not a date; use YYYY-MM-DD"):
            await add(api, MEMO, id="urn:doc:bad", date="last spring")
        with pytest.raises(RemoteError, match="date: '2025-02-30' is not a date"):
            await add(api, MEMO, id="urn:doc:bad", date="2025-02-30")
        assert (await api.request("librarian", {"operation": "list-documents"})).get("document-metadatas") == []

        added = await add(api, MEMO, id="urn:doc:memo", date="2025-06-01T09:30:00+02:00")
        assert added["date"] == "2025-06-01T07:30:00Z"
        stored = await api.request("librarian", {"operation": "get-document-metadata", "document-id": "urn:doc:memo"})
        assert stored["document-metadata"]["date"] == "2025-06-01T07:30:00Z"
        assert (await add(api, UNDATED, id="urn:doc:undated"))["date"] == ""


async def dates_in_flow(api, stack, path, **metadata) -> set[str]:
    """Process one file; the dates its chunks, the chunker's provenance and the extracted facts carried."""
    async with (observed(stack.backend, "persistent://tg/flow/chunk-load:default", TextChunk) as chunks,
                observed(stack.backend, "persistent://tg/flow/triples-store:default", Triples) as triples):
        meta = await add_document(api, path, collection="default", **metadata)
        await process(api, meta["id"], "default", "default")
        await wait_for_extraction(api, "default", [meta["id"]], "default", 120)
    ours = [t for t in triples if t.metadata.root == meta["id"]]
    provenance = [t for t in ours if any(triple.o == TG.Chunk for triple in t.triples)]
    extracted = [t for t in ours if t.confidence]
    assert chunks and provenance and extracted
    return {m.metadata.date for m in [*chunks, *provenance, *extracted]}


async def test_the_date_reaches_every_chunk_from_metadata_or_from_the_text(tmp_path):
    for name, text in (("memo.md", MEMO), ("undated.md", UNDATED)):
        (tmp_path / name).write_text(text)
    async with ingest_stack(tmp_path / "data") as (api, stack):
        assert await dates_in_flow(api, stack, tmp_path / "memo.md") == {"2025-03-12T00:00:00Z"}  # "Date: …"
        given = await dates_in_flow(api, stack, tmp_path / "memo.md", document_id="urn:doc:given", date="2024-12")
        assert given == {"2024-12-01T00:00:00Z"}  # the metadata wins over the text
        assert await dates_in_flow(api, stack, tmp_path / "undated.md") == {""}  # a birth date is no dating line


async def test_the_cli_sends_the_date_and_a_bad_one_fails_in_one_line(tmp_path):
    (tmp_path / "memo.md").write_text(MEMO)
    async with ingest_stack(tmp_path / "data") as (api, _):
        code, out, err = await tg_async("tg-add-library-document", "-u", api.url, str(tmp_path / "memo.md"),
                                        "--id", "urn:doc:cli", "--date", "2025-06-01")
        assert code == 0, err
        stored = await api.request("librarian", {"operation": "get-document-metadata", "document-id": "urn:doc:cli"})
        assert stored["document-metadata"]["date"] == "2025-06-01T00:00:00Z"

        code, out, err = await tg_async("tg-load-text", "-u", api.url, str(tmp_path / "memo.md"), "--date", "soon")
        assert code == 1 and "date: 'soon' is not a date" in err and len(err.strip().splitlines()) == 1
