"""The keyword index on disk, without a bus: BM25 ranking of fact sentences, labels kept across
batches, idempotent upserts, removals, per-collection isolation, and query text that cannot break it."""

from __future__ import annotations

import pytest

from tracegraph.base.provenance.extraction import document_triples
from tracegraph.base.provenance.vocab import RDF, RDFS, SKOS, is_knowledge
from tracegraph.base.stores import keyword
from tracegraph.base.stores.keyword import KeywordIndex, is_fact, readable, sentence
from tracegraph.base.stores.protocol import CollectionRef
from tracegraph.schemas.rdf import Triple, iri, literal

E = "https://trustgraph.ai/e/"
R = "https://trustgraph.ai/r/"
ALICE = CollectionRef("alice", "default")
BOB = CollectionRef("bob", "default")


def fact(s: str, p: str, o: str) -> Triple:
    return Triple(s=iri(E + s), p=iri(R + p), o=iri(E + o))


def label(uri: str, text: str) -> Triple:
    return Triple(s=iri(uri), p=RDFS.label, o=literal(text))


DEPENDS = fact("helios-grid", "depends-on", "corvid-analytics")
SUPPLIES = fact("meridian-dam", "supplies", "sable-water-authority")
LEADS = fact("mara-lindqvist", "leads", "helios-grid")
LABELS = [label(E + "helios-grid", "Helios Grid"), label(E + "corvid-analytics", "Corvid Analytics"),
          label(R + "depends-on", "depends on"), label(E + "meridian-dam", "Meridian Dam")]


@pytest.fixture
async def index(tmp_path):
    index = KeywordIndex(tmp_path)
    yield index
    await index.aclose()


async def facts(index: KeywordIndex, ref: CollectionRef, text: str, limit: int = 20) -> list[Triple]:
    return [hit.triple for hit in await index.search(ref, text, limit)]


async def test_the_fact_whose_sentence_matches_ranks_first(index):
    await index.apply(ALICE, [SUPPLIES, DEPENDS, LEADS, *LABELS])
    hits = await index.search(ALICE, "Corvid Analytics load forecasting", 5)
    assert hits[0].triple == DEPENDS
    assert hits[0].text == "Helios Grid depends on Corvid Analytics"
    assert hits[0].score > 0 and [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert SUPPLIES not in [h.triple for h in hits]


async def test_a_label_from_an_earlier_batch_names_a_later_fact_and_a_new_label_renames_old_facts(index):
    await index.apply(ALICE, LABELS)
    await index.apply(ALICE, [DEPENDS])
    assert (await index.search(ALICE, "Helios", 1))[0].text == "Helios Grid depends on Corvid Analytics"
    await index.apply(ALICE, [label(R + "depends-on", "relies upon")])
    hit = (await index.search(ALICE, "relies", 1))[0]
    assert hit.triple == DEPENDS and hit.text == "Helios Grid relies upon Corvid Analytics"


async def test_without_a_label_the_iri_reads_as_words(index):
    await index.apply(ALICE, [fact("port-sable", "is_located_in", "northern_vale")])
    hit = (await index.search(ALICE, "northern vale", 1))[0]
    assert hit.text == "port sable is located in northern vale"
    assert readable("urn:chunk:doc-1") == "doc 1" and readable("https://example.org/ns#Thing/") == "Thing"


async def test_literals_and_rdf_type_are_facts_but_labels_and_axioms_are_not(index):
    definition = Triple(s=iri(E + "helios-grid"), p=SKOS.definition, o=literal("a regional energy operator"))
    typed = Triple(s=iri(E + "helios-grid"), p=RDF.type, o=iri(E + "Company"))
    axiom = Triple(s=iri(E + "Company"), p=iri("http://www.w3.org/2000/01/rdf-schema#subClassOf"), o=iri(E + "Org"))
    await index.apply(ALICE, [definition, typed, axiom, *LABELS])
    assert await facts(index, ALICE, "regional energy operator") == [definition]
    assert await facts(index, ALICE, "company") == [typed]
    assert (await index.search(ALICE, "company", 1))[0].text == "Helios Grid is a Company"
    assert set(await facts(index, ALICE, "Helios Grid")) == {definition, typed}
    assert not is_fact(LABELS[0]) and not is_fact(axiom) and is_fact(typed)
    assert await facts(index, ALICE, "Meridian Dam") == []  # only a label mentions it


B_BOY = fact("b-boy-song", "performed-by", "meek-mill")
B_BOY_LABELS = [label(E + "b-boy-song", "B Boy (song)"), label(R + "performed-by", "performed by"),
                label(E + "meek-mill", "Meek Mill")]


def described(doc: str) -> list[Triple]:
    """Everything the librarian writes about a document, every optional field given."""
    return document_triples(doc, title="B Boy (song)", mime_type="text/plain", date="2026-03-01T10:00:00Z",
                            source="https://en.wikipedia.org/wiki/B_Boy_(song)", creator="Wikipedia editors",
                            page_count=2)


@pytest.mark.parametrize("doc", ["urn:trustgraph:doc:0123abcd", "https://example.org/library/b-boy-song"])
async def test_a_documents_description_is_never_indexed_only_the_fact_is(index, doc):
    await index.apply(ALICE, [*described(doc), B_BOY, *B_BOY_LABELS])
    found: set[Triple] = set()
    for text in ["B Boy (song)", "B", "Boy", "song", "title", "has title", "document", "Document", "entity",
                 "text plain", "mimeType mime type", "2026", "date", "Wikipedia editors", "wikipedia",
                 "source", "creator", "page count 2", "b boy song document title mime type text plain date",
                 "Meek Mill", "performed by"]:
        hits = await index.search(ALICE, text, 20)
        assert all(is_knowledge(h.triple) for h in hits), text
        found |= {h.triple for h in hits}
    assert found == {B_BOY}
    assert [h.text for h in await index.search(ALICE, "B Boy (song)", 20)] == ["B Boy (song) performed by Meek Mill"]


def looser_rule(t: Triple) -> bool:
    """The rule before document metadata was excluded: only RDF/RDFS/OWL plumbing, rdf:type kept."""
    return t.p == RDF.type or not t.p.iri.startswith(("http://www.w3.org/1999/02/22-rdf-syntax-ns#",
                                                      "http://www.w3.org/2000/01/rdf-schema#",
                                                      "http://www.w3.org/2002/07/owl#"))


async def test_an_entry_a_looser_rule_let_in_is_never_returned_and_relabelling_drops_it(index, monkeypatch):
    doc = "https://example.org/library/b-boy-song"
    title = Triple(s=iri(doc), p=iri("http://purl.org/dc/elements/1.1/title"), o=literal("B Boy (song)"))
    with monkeypatch.context() as old_rule:  # an index written before the rule was tightened
        old_rule.setattr(keyword, "is_fact", looser_rule)
        await index.apply(ALICE, [title, B_BOY, *B_BOY_LABELS])
        assert title in await facts(index, ALICE, "B Boy title")
    assert await facts(index, ALICE, "B Boy title", 1) == [B_BOY], "a search pages past the stale entry"
    await index.apply(ALICE, [label(doc, "B Boy, the document")])  # a label change re-reads what names it
    with monkeypatch.context() as old_rule:
        old_rule.setattr(keyword, "is_fact", looser_rule)
        assert await facts(index, ALICE, "B Boy title") == [B_BOY], "relabelling deleted, not rewrote, it"


async def test_a_removal_takes_out_an_entry_a_looser_rule_let_in(index, monkeypatch):
    mime = Triple(s=iri("https://example.org/d"), p=iri("https://trustgraph.ai/ns/mimeType"), o=literal("text/plain"))
    monkeypatch.setattr(keyword, "is_fact", looser_rule)
    await index.apply(ALICE, [mime, DEPENDS])
    await index.apply(ALICE, removed=[mime])
    assert await facts(index, ALICE, "text plain mime type") == []


async def test_writing_a_fact_twice_leaves_one_document(index):
    await index.apply(ALICE, [DEPENDS, *LABELS])
    await index.apply(ALICE, [DEPENDS, DEPENDS.model_copy(update={"g": None})])
    assert await facts(index, ALICE, "Corvid") == [DEPENDS]


async def test_a_removed_fact_is_no_longer_found(index):
    await index.apply(ALICE, [DEPENDS, LEADS, *LABELS])
    await index.apply(ALICE, removed=[DEPENDS])
    assert await facts(index, ALICE, "Corvid Analytics") == []
    assert await facts(index, ALICE, "Helios Grid") == [LEADS]


async def test_a_removed_label_falls_back_to_the_iri(index):
    await index.apply(ALICE, [DEPENDS, label(E + "corvid-analytics", "Crow Numbers")])
    await index.apply(ALICE, removed=[label(E + "corvid-analytics", "Crow Numbers")])
    assert await facts(index, ALICE, "crow") == []
    assert (await index.search(ALICE, "corvid", 1))[0].text == "helios grid depends on corvid analytics"


async def test_collections_do_not_see_each_other(index):
    await index.apply(ALICE, [DEPENDS, *LABELS])
    await index.apply(BOB, [SUPPLIES])
    assert await facts(index, BOB, "Corvid Analytics") == []
    assert await facts(index, ALICE, "sable water") == []
    assert await facts(index, CollectionRef("carol", "nothing"), "Corvid") == []
    assert not (index.root / "carol").exists(), "a search must not create a collection"


async def test_the_index_survives_reopening(tmp_path):
    first = KeywordIndex(tmp_path)
    await first.apply(ALICE, [DEPENDS, *LABELS])
    await first.aclose()
    second = KeywordIndex(tmp_path)
    try:
        assert await facts(second, ALICE, "Corvid") == [DEPENDS]
        await second.apply(ALICE, [fact("helios-grid", "buys-power-from", "meridian-dam")])
        assert (await second.search(ALICE, "buys power", 1))[0].text == "Helios Grid buys power from Meridian Dam"
    finally:
        await second.aclose()


async def test_more_collections_than_open_indexes(tmp_path):
    index = KeywordIndex(tmp_path, max_open=2)
    try:
        refs = [CollectionRef("alice", f"c{i}") for i in range(5)]
        for ref in refs:
            await index.apply(ref, [DEPENDS, *LABELS])
        assert len(index._open) <= 2
        for ref in refs:
            assert await facts(index, ref, "Corvid") == [DEPENDS]
    finally:
        await index.aclose()


async def test_drop_forgets_a_collection(index):
    await index.apply(ALICE, [DEPENDS, *LABELS])
    await index.drop(ALICE)
    assert await facts(index, ALICE, "Corvid") == []
    await index.apply(ALICE, [SUPPLIES])
    assert await facts(index, ALICE, "Corvid") == [] and await facts(index, ALICE, "supplies") == [SUPPLIES]


@pytest.mark.parametrize("text", ["AND (( ) NOT : *", "", "   ", 'title:"x" OR ~2^3 -', "the of and",
                                  "corvid " * 2000, "ünïcødé ✓ 北京"])
async def test_hostile_query_text_never_raises(index, text):
    await index.apply(ALICE, [DEPENDS, *LABELS])
    hits = await index.search(ALICE, text, 10)
    assert isinstance(hits, list)
    if text.startswith("corvid"):
        assert [h.triple for h in hits] == [DEPENDS]


def test_a_sentence_reads_subject_predicate_object():
    labels = {E + "helios-grid": "Helios Grid"}
    assert sentence(Triple(s=iri(E + "helios-grid"), p=iri(R + "employs"), o=literal("2,400 people")), labels) == \
        "Helios Grid employs 2,400 people"


def test_graph_updates_split_big_changes_and_carry_extra_nodes():
    from tracegraph.flow.triples.processor import UPDATE_BATCH, graph_updates
    from tracegraph.schemas.ingest import Metadata

    meta = Metadata(id="urn:doc", root="urn:doc")
    many = [fact(f"e{i}", "links", "hub") for i in range(2 * UPDATE_BATCH + 1)]
    updates = graph_updates(meta, added=many)
    assert [len(u.added) for u in updates] == [UPDATE_BATCH, UPDATE_BATCH, 1]
    assert updates[-1].nodes == [E + f"e{2 * UPDATE_BATCH}", E + "hub"]
    assert graph_updates(meta) == []
    removal = graph_updates(meta, removed=[DEPENDS], nodes=[E + "orphan"])
    assert len(removal) == 1 and removal[0].removed == [DEPENDS]
    assert removal[0].nodes == [E + "helios-grid", E + "corvid-analytics", E + "orphan"]
