"""The librarian's tombstone: a removed document is remembered with its time and flows, so removing it
again is a sweep ("already removed"), not `no document …`; adding it again forgets the tombstone."""

from __future__ import annotations

import pytest

from tracegraph.flow.librarian.library import Library
from tracegraph.schemas.library import DocumentMetadata

META = DocumentMetadata(id="urn:doc:a", user="alice", collection="docs", title="A", size=5)


@pytest.fixture
async def library(tmp_path):
    library = await Library(tmp_path / "library").open()
    yield library
    await library.close()


async def test_a_removed_document_keeps_its_tombstone_with_its_time_and_flows(library):
    await library.add(META, b"hello")
    await library.mark_removed(META, ["default"], "2026-11-02T10:00:00Z")
    await library.remove(META)

    tomb = await library.removed("alice", META.id)

    assert tomb is not None and (tomb.time, tomb.flows, tomb.meta.id) == ("2026-11-02T10:00:00Z", ["default"], META.id)
    assert await library.get("alice", META.id) is None
    assert await library.removed("bob", META.id) is None  # another user's library has no such tombstone


async def test_a_retried_removal_keeps_the_first_time_and_every_flow(library):
    await library.mark_removed(META, ["default"], "2026-11-02T10:00:00Z")
    await library.mark_removed(META, ["other"], "2026-11-03T10:00:00Z")

    tomb = await library.removed("alice", META.id)

    assert tomb is not None and (tomb.time, tomb.flows) == ("2026-11-02T10:00:00Z", ["default", "other"])


async def test_adding_the_document_again_forgets_the_tombstone(library):
    await library.add(META, b"hello")
    await library.mark_removed(META, ["default"], "2026-11-02T10:00:00Z")
    await library.remove(META)

    assert await library.add(META, b"hello")

    assert await library.removed("alice", META.id) is None
