"""The passage index (BM25 over chunks with their titles): ranking, idempotent writes, removal by id
and by document, isolation between collections, and reopening."""

from __future__ import annotations

import pytest

from tracegraph.base.stores.passages import Passage, PassageIndex
from tracegraph.base.stores.protocol import CollectionRef

REF = CollectionRef("alice", "docs")
PASSAGES = [Passage("urn:chunk:1", "urn:doc:1", "B Boy (song)", "It was released in 1999 by Ruffhouse Records."),
            Passage("urn:chunk:2", "urn:doc:2", "Ruffhouse Records", "An American record label founded in 1989."),
            Passage("urn:chunk:3", "urn:doc:2", "Ruffhouse Records", "Its artists included the Fugees."),
            Passage("urn:chunk:4", "urn:doc:3", "Adolescence", "The formal study of adolescent psychology.")]


@pytest.fixture
async def index(tmp_path):
    index = PassageIndex(tmp_path)
    await index.add(REF, PASSAGES)
    yield index
    await index.aclose()


async def ids(index: PassageIndex, text: str, ref: CollectionRef = REF) -> list[str]:
    return [h.id for h in await index.search(ref, text, 10)]


async def test_titles_count_as_words_of_their_passage(index):
    assert (await ids(index, "B Boy song"))[0] == "urn:chunk:1"
    assert (await ids(index, "record labels"))[0] == "urn:chunk:2"  # stemmed: labels ~ label
    hits = await index.search(REF, "Ruffhouse", 10)
    assert {h.id for h in hits} == {"urn:chunk:1", "urn:chunk:2", "urn:chunk:3"}
    assert all(h.score > 0 for h in hits) and hits[0].document in {"urn:doc:1", "urn:doc:2"}


async def test_writing_a_passage_again_keeps_one_copy(index):
    await index.add(REF, PASSAGES[:1])
    assert (await ids(index, "released 1999")).count("urn:chunk:1") == 1


async def test_removal_by_id_and_by_document(index):
    assert await index.remove(REF, ids=["urn:chunk:1"]) == 1
    assert "urn:chunk:1" not in await ids(index, "Ruffhouse")
    assert await index.remove(REF, document="urn:doc:2") == 2
    assert await ids(index, "Ruffhouse") == []
    assert await ids(index, "adolescent psychology") == ["urn:chunk:4"]
    assert await index.remove(CollectionRef("nobody", "none"), document="urn:doc:2") == 0


async def test_collections_are_isolated_and_reopen(tmp_path, index):
    other = CollectionRef("bob", "docs")
    assert await ids(index, "Ruffhouse", other) == []
    await index.aclose()
    again = PassageIndex(tmp_path)
    assert (await ids(again, "Fugees")) == ["urn:chunk:3"]
    await again.aclose()


async def test_text_without_usable_words_finds_nothing(index):
    assert await ids(index, "the of and ???") == []
    assert await index.search(REF, "Ruffhouse", 0) == []
