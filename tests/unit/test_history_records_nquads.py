"""History records built as N-Quads text (issue 30): the same quads as the model-built records the
store held before, so stored history reads the same; a slot's history read in one batch equals the
pattern-lookup reading; and a hand-made history written either way answers the same."""

from __future__ import annotations

import pytest

from tracegraph.base.provenance.uris import entity_uri, relation_uri
from tracegraph.base.provenance.vocab import RDF, RDFS, TG, XSD
from tracegraph.base.stores.oxigraph import OxigraphTripleStore
from tracegraph.base.stores.protocol import HISTORY_FACTS_GRAPH, HISTORY_GRAPH, CollectionRef
from tracegraph.base.stores.terms import read_nquads
from tracegraph.base.temporal import query
from tracegraph.base.temporal.keeper import HistoryKeeper
from tracegraph.base.temporal.nquads import term_nt
from tracegraph.base.temporal.records import record_nquads, record_uri
from tracegraph.flow.triples.temporal import store_rows
from tracegraph.schemas.ingest import Metadata
from tracegraph.schemas.rdf import BlankTerm, Triple, TripleTerm, iri, literal

REF = CollectionRef("alice", "services")
CHECKOUT, OWNED_BY = iri(entity_uri("Checkout")), iri(relation_uri("owned by"))
MOTTO = iri(relation_uri("motto"))
TEAMS = [iri(entity_uri(name)) for name in ("Payments team", "Platform team", "Ledger team")]
DOCS = [Metadata(id=f"urn:doc:{year}", root=f"urn:doc:{year}", user="alice", collection="services",
                 time=f"2026-11-0{i + 1}T10:00:00Z", date=f"{year}-01-10T00:00:00Z")
        for i, year in enumerate((2023, 2024, 2025))]


def legacy_record_quads(record: str, fact: Triple, document: str, recorded_at: str, valid_from: str,
                        confidence: float | None = None) -> list[Triple]:
    """The record as the keeper built it before issue 30, one model object per quad (the stored format)."""
    h = lambda p, o: Triple(s=iri(record), p=p, o=o, g=HISTORY_GRAPH)  # noqa: E731
    quads = [h(RDF.reifies, TripleTerm(triple=Triple(s=fact.s, p=fact.p, o=fact.o))), h(TG.statedIn, iri(document)),
             h(TG.recordedAt, literal(recorded_at, XSD.dateTime.iri)), h(TG.validFrom, literal(valid_from, XSD.dateTime.iri)),
             Triple(s=fact.s, p=fact.p, o=fact.o, g=HISTORY_FACTS_GRAPH)]
    if confidence is not None:
        quads.append(h(TG.extractionConfidence, literal(f"{confidence:.3f}", XSD.decimal.iri)))
    return quads


@pytest.mark.parametrize("obj", [TEAMS[0], literal('say "hi"\\ on\na new line\r'), literal("Bonjour", language="fr"),
                                 literal("42", "http://www.w3.org/2001/XMLSchema#integer"), BlankTerm(id="b1")])
@pytest.mark.parametrize("confidence", [None, 0.8])
def test_a_record_as_text_is_the_record_as_models(obj, confidence):
    fact = Triple(s=CHECKOUT, p=MOTTO, o=obj)
    args = ("urn:trustgraph:fact-record:1", fact, "urn:doc:2024", "2026-11-01T10:00:00Z", "2024-01-10T00:00:00Z", confidence)
    assert sorted(map(str, read_nquads(record_nquads(*args)))) == sorted(map(str, legacy_record_quads(*args)))


def test_a_triple_term_is_written_in_the_rdf_1_2_form():
    nested = TripleTerm(triple=Triple(s=CHECKOUT, p=OWNED_BY, o=literal('a "b"')))
    assert term_nt(nested) == f'<<( <{CHECKOUT.iri}> <{OWNED_BY.iri}> "a \\"b\\"" )>>'
    assert query.sparql_term(nested) == term_nt(nested)


@pytest.fixture
async def store(tmp_path):
    store = OxigraphTripleStore(tmp_path / "triples")
    yield store
    await store.aclose()


async def admit_all(keeper: HistoryKeeper) -> None:
    for meta, team in zip(DOCS, TEAMS):
        admission = await keeper.admit(REF, meta, [Triple(s=CHECKOUT, p=OWNED_BY, o=team),
                                                   Triple(s=CHECKOUT, p=RDFS.label, o=literal("Checkout"))])
        await admission.store(keeper.store, REF)


async def test_a_slots_history_read_in_one_batch_equals_the_pattern_lookups(store):
    keeper = HistoryKeeper(store)
    keeper.functional = frozenset({OWNED_BY.iri})
    await admit_all(keeper)
    await admission_for_unseen_slot(keeper)
    slots = [(CHECKOUT, OWNED_BY), (iri(entity_uri("Nobody")), OWNED_BY)]
    batched = await keeper._slots_records(REF, slots)
    for s, p in slots:
        assert sorted(r.uri for r in batched[(str(s), str(p))]) == \
            sorted(r.uri for r in await keeper._slot_records(REF, s, p))
    assert len(batched[(str(CHECKOUT), str(OWNED_BY))]) >= 3  # one record per document, and the reopened ones
    assert (await keeper._slots_records(REF, [(BlankTerm(id="x"), OWNED_BY)])) == {}  # read by lookups instead


async def admission_for_unseen_slot(keeper: HistoryKeeper) -> None:
    admission = await keeper.admit(REF, DOCS[0], [Triple(s=iri(entity_uri("Nobody")), p=MOTTO, o=literal("x"))])
    await admission.store(keeper.store, REF)


async def test_a_hand_made_history_answers_the_same_written_as_text_or_as_models(tmp_path):
    """The same admissions stored twice: once as admitted now (records as N-Quads text), once with every
    record re-built as the model quads of the old format. Every temporal answer agrees."""
    answers = []
    for legacy in (False, True):
        store = OxigraphTripleStore(tmp_path / ("legacy" if legacy else "text"))
        keeper = HistoryKeeper(store)
        keeper.functional = frozenset({OWNED_BY.iri})
        for meta, team in zip([DOCS[2], DOCS[0], DOCS[1]], [TEAMS[2], TEAMS[0], TEAMS[1]]):  # out of order
            fact = Triple(s=CHECKOUT, p=OWNED_BY, o=team)
            admission = await keeper.admit(REF, meta, [fact, Triple(s=CHECKOUT, p=MOTTO, o=literal(meta.root))],
                                           confidence={})
            if legacy:
                admission.write += [q for r in admission.records for q in read_nquads(r)]
                admission.records = []
            await admission.store(store, REF)
        rows = store_rows(store, REF)
        at = [(await query.snapshot(rows, day, known, subject=CHECKOUT.iri))[0]
              for day in ("2023-06-01T00:00:00Z", "2024-06-01T00:00:00Z", "2026-01-01T00:00:00Z")
              for known in (None, "2026-11-02T12:00:00Z")]
        changes, _ = await query.diff(rows, "2023-06-01T00:00:00Z", "2025-06-01T00:00:00Z")
        answers.append(([sorted((str(s.fact.o), tuple(sorted(r.uri for r in s.records))) for s in states)
                         for states in at], sorted((c.change, str(c.fact.fact.o)) for c in changes)))
        await store.aclose()
    text, models = answers
    assert text == models
    now = {o for o, _ in text[0][-2]}  # 2026, as known now: the 2025 owner, whatever order the documents came in
    assert str(TEAMS[2]) in now and not now & {str(TEAMS[0]), str(TEAMS[1])}


async def test_a_bulk_load_stores_its_records_but_not_its_quads_again(store):
    keeper = HistoryKeeper(store)
    fact = Triple(s=CHECKOUT, p=MOTTO, o=literal("fast"))
    admission = await keeper.admit(REF, DOCS[0], [fact])
    await admission.store(store, REF, written=True)
    assert not await store.match(REF, s=CHECKOUT, p=MOTTO)  # the bulk path wrote (here: did not write) it
    assert await store.match(REF, s=iri(record_uri(fact, DOCS[0].root)), p=TG.statedIn, g=HISTORY_GRAPH)


async def test_an_engine_without_sparql_decides_the_same_slots_by_pattern_lookups(store):
    """Cassandra refuses SPARQL: the keeper reads each slot by lookups and supersedes just the same."""
    from tracegraph.base.errors import QueryError

    class NoSparql:
        def __getattr__(self, name):
            return getattr(store, name)

        async def query(self, *args, **kwargs):
            raise QueryError("SPARQL is not supported on this engine")

    keeper = HistoryKeeper(NoSparql())
    keeper.functional = frozenset({OWNED_BY.iri})
    await admit_all(keeper)
    assert await keeper._slots_records(REF, [(CHECKOUT, OWNED_BY)]) == {}
    assert {t.o.iri for t in await store.match(REF, s=CHECKOUT, p=OWNED_BY)} == {TEAMS[2].iri}
    superseded = await store.match(REF, p=TG.supersededBy, g=HISTORY_GRAPH)
    assert len(superseded) == 2  # 2023's owner ended by 2024's, 2024's by 2025's
