"""History through the real triples service: a newer document supersedes an older one's value, the
point-in-time answers and the diff name both documents, and removing the newer document brings the
older value back while the history keeps what was known before the removal."""

from __future__ import annotations

import asyncio

import pytest

from tracegraph.base.provenance.uris import entity_uri, relation_uri
from tracegraph.schemas.dates import now

from support.ingest import CORPUS, ingest_stack, load_and_wait
from support.stack import wait_until_async

pytestmark = pytest.mark.timeout(300)

SKYLINE, OWNED_BY = entity_uri("Skyline"), relation_uri("is owned by")
GUILD, GRID = entity_uri("Forecasting Guild"), entity_uri("Grid Analytics team")


async def owners(api, **when) -> set[str]:
    reply = await api.flow_service("default", "temporal", {"subject": SKYLINE, **when})
    return {f["o"]["i"] for f in reply["facts"] if f["p"]["i"] == OWNED_BY}


async def current_owners(api) -> set[str]:
    reply = await api.flow_service("default", "triples", {"s": {"t": "i", "i": SKYLINE}, "p": {"t": "i", "i": OWNED_BY}})
    return {t["o"]["i"] for t in reply["response"]}


async def test_supersession_diff_and_removal_through_the_service(tmp_path):
    async with ingest_stack(tmp_path) as (api, _stack):
        older = await load_and_wait(api, CORPUS / "skyline-review-2024.md")
        newer = await load_and_wait(api, CORPUS / "skyline-review-2025.md")

        assert await current_owners(api) == {GRID}
        assert await owners(api, at="2024-06-01") == {GUILD}
        assert await owners(api) == {GRID}
        diff = await api.flow_service("default", "temporal", {"operation": "diff", "from": "2025-01-01",
                                                              "to": "2025-12-31"})
        (owner,) = [c for c in diff["changes"] if c["fact"]["p"]["i"] == OWNED_BY]
        assert owner["change"] == "changed"
        assert (owner["previous"]["o"]["i"], owner["fact"]["o"]["i"]) == (GUILD, GRID)
        assert (owner["previous"]["sources"], owner["fact"]["sources"]) == ([older], [newer])
        assert owner["previous"]["superseded-by"] == newer

        await asyncio.sleep(1.1)  # instants are whole seconds: "before the removal" is a second before it
        before_removal = now()
        await asyncio.sleep(1.1)
        await api.request("librarian", {"operation": "remove-document", "document-id": newer})
        await wait_until_async(lambda: _is(current_owners(api), {GUILD}), timeout=30, what="older owner back")
        assert await owners(api) == {GUILD}
        assert await owners(api, at="2026-01-01", known=before_removal) == {GRID}  # history kept
        recorded = await api.flow_service("default", "temporal", {"operation": "diff", "axis": "recorded",
                                                                  "from": before_removal, "to": "2099-01-01"})
        assert [(c["change"], c["fact"]["o"]["i"], c["previous"]["o"]["i"]) for c in recorded["changes"]
                if c["fact"]["p"]["i"] == OWNED_BY] == [("changed", GUILD, GRID)]


async def _is(value, expected) -> bool:
    return await value == expected
