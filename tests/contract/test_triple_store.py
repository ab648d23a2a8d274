"""The triple-store contract, written once and run unchanged on every engine (oxigraph; Cassandra when reachable)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from tracegraph.base.errors import ConfigError, QueryError, TransientError
from tracegraph.base.stores.protocol import ALL_GRAPHS, SOURCE_GRAPH, CollectionRef, TripleStore
from tracegraph.base.stores.terms import to_nquads
from tracegraph.base.stores.triples_registry import open_triple_store
from tracegraph.schemas.rdf import BlankTerm, Triple, iri, literal, quoted
from support.names import unique
from support.servers import wanted_cassandra

# Import engines now: a first import inside a test would read files on the event loop.
from tracegraph.base.stores.oxigraph import OxigraphTripleStore

try:
    import tracegraph.base.stores.cassandra  # noqa: F401
except ImportError:  # the [cassandra] extra is not installed
    pass

# Cassandra runs when TG_CASSANDRA_HOSTS names a node or TG_START_SERVERS / TG_REQUIRE_CASSANDRA ask for one.
NO_CASSANDRA = wanted_cassandra().skip_reason

ENGINES = [
    "oxigraph",
    pytest.param("cassandra", marks=[pytest.mark.cassandra,
                                     pytest.mark.skipif(bool(NO_CASSANDRA), reason=str(NO_CASSANDRA))]),
]
SPARQL_ENGINES = {"oxigraph"}  # Cassandra refuses SPARQL (see test_engine_without_sparql_says_so)

pytestmark = pytest.mark.timeout(120)

TG = "https://trustgraph.ai/ns/"
XSD = "http://www.w3.org/2001/XMLSchema#"
ALICE, BOB, CAROL = iri("urn:e:alice"), iri("urn:e:bob"), iri("urn:e:carol")
KNOWS, NAME = iri("urn:p:knows"), iri("urn:p:name")
CONTAINS = iri(TG + "contains")
SUBGRAPH = iri("urn:trustgraph:subgraph:1")


def t(s, p, o, g: str | None = None) -> Triple:
    return Triple(s=s, p=p, o=o, g=g)


FACTS = [t(ALICE, KNOWS, BOB), t(BOB, KNOWS, CAROL), t(ALICE, NAME, literal("Alice"))]
EDGE = quoted(ALICE, KNOWS, BOB)
PROVENANCE = [t(SUBGRAPH, CONTAINS, EDGE, SOURCE_GRAPH)]


@pytest.fixture(params=ENGINES)
def engine(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
async def store(engine: str, tmp_path, request: pytest.FixtureRequest) -> AsyncIterator[TripleStore]:
    hosts = request.getfixturevalue("cassandra_hosts") if engine == "cassandra" else ""
    opened = open_triple_store(engine, data_dir=tmp_path, cassandra_hosts=hosts, keyspace="tracegraph_test")
    yield opened
    await opened.aclose()


@pytest.fixture
def ref() -> CollectionRef:
    return CollectionRef(unique("u"), "default")


@pytest.fixture
async def sparql_store(engine: str, store: TripleStore, ref: CollectionRef) -> TripleStore:
    """A store holding FACTS and PROVENANCE, on engines that offer SPARQL."""
    if engine not in SPARQL_ENGINES:
        pytest.skip(f"{engine} has no SPARQL")
    await store.add(ref, FACTS + PROVENANCE)
    return store


def spo(triples: list[Triple]) -> set[tuple[str, str, str, str | None]]:
    return {(str(x.s), str(x.p), str(x.o), x.g) for x in triples}


# --- writes and pattern queries ------------------------------------------------------------

async def test_add_then_match_with_each_position_unbound(store, ref):
    assert await store.add(ref, FACTS) == 3
    assert spo(await store.match(ref, s=ALICE)) == spo([FACTS[0], FACTS[2]])
    assert spo(await store.match(ref, p=KNOWS)) == spo(FACTS[:2])
    assert spo(await store.match(ref, o=BOB)) == spo(FACTS[:1])
    assert spo(await store.match(ref)) == spo(FACTS)
    assert spo(await store.match(ref, s=ALICE, p=KNOWS)) == spo(FACTS[:1])
    assert spo(await store.match(ref, s=ALICE, o=BOB)) == spo(FACTS[:1])
    assert spo(await store.match(ref, p=KNOWS, o=CAROL)) == spo(FACTS[1:2])
    assert spo(await store.match(ref, s=ALICE, p=KNOWS, o=BOB)) == spo(FACTS[:1])
    assert await store.match(ref, s=CAROL) == []
    assert await store.match(ref, s=literal("Alice")) == []  # no literal subjects in RDF 1.2


async def test_match_stops_at_the_limit(store, ref):
    await store.add(ref, [t(ALICE, KNOWS, iri(f"urn:e:{i}")) for i in range(20)])
    assert len(await store.match(ref, s=ALICE, limit=7)) == 7
    assert len(await store.match(ref, limit=5)) == 5


async def test_around_gives_a_hops_neighbourhood_in_one_call(store, ref):
    await store.add(ref, FACTS + PROVENANCE + [t(iri(f"urn:e:{i}"), KNOWS, CAROL) for i in range(5)])
    found = await store.around(ref, [ALICE.iri, CAROL.iri, ALICE.iri], limit=3)
    # Alice's outgoing facts, then Carol's incoming ones: 3 of the 6, each fact once; no provenance
    assert spo(found[:2]) == spo([FACTS[0], FACTS[2]])
    assert len(found) == 2 + 3 and len(set(found)) == len(found)
    assert all(x.o == CAROL for x in found[2:])
    assert await store.around(ref, [], limit=3) == []
    assert spo(await store.around(ref, [SUBGRAPH.iri], g=SOURCE_GRAPH)) == spo(
        [x for x in PROVENANCE if x.s == SUBGRAPH or x.o == SUBGRAPH])
    assert await store.around(CollectionRef(unique("u"), "none"), [ALICE.iri]) == []


async def test_named_graphs_default_one_graph_and_all(store, ref):
    await store.add(ref, FACTS + PROVENANCE)
    assert spo(await store.match(ref, s=SUBGRAPH)) == set()
    assert spo(await store.match(ref, s=SUBGRAPH, g=SOURCE_GRAPH)) == spo(PROVENANCE)
    assert spo(await store.match(ref, g=SOURCE_GRAPH)) == spo(PROVENANCE)
    assert spo(await store.match(ref, g=ALL_GRAPHS)) == spo(FACTS + PROVENANCE)
    assert spo(await store.match(ref)) == spo(FACTS)
    assert [x.g for x in await store.match(ref, p=CONTAINS, g=ALL_GRAPHS)] == [SOURCE_GRAPH]


async def test_quoted_triple_object_is_stored_and_matched(store, ref):
    await store.add(ref, PROVENANCE)
    [found] = await store.match(ref, o=EDGE, g=SOURCE_GRAPH)
    assert found == PROVENANCE[0]
    assert found.o == EDGE and found.o.triple.s == ALICE
    assert await store.match(ref, o=quoted(ALICE, KNOWS, CAROL), g=SOURCE_GRAPH) == []


async def test_quoted_triple_subject_is_refused_as_rdf_1_2_does(store, ref):
    with pytest.raises(ValueError, match="only as objects"):
        await store.add(ref, [t(EDGE, iri(TG + "confidence"), literal("0.9"))])


async def test_adding_again_changes_nothing(store, ref):
    await store.add(ref, FACTS + PROVENANCE)
    assert await store.add(ref, FACTS + PROVENANCE) == 4
    assert await store.count(ref) == 4


async def test_literal_datatypes_and_languages_round_trip(store, ref):
    objects = [
        literal("plain"),
        literal("42", datatype=XSD + "integer"),
        literal("2024-05-01T10:00:00Z", datatype=XSD + "dateTime"),
        literal("x", datatype="urn:datatype:custom"),
        literal("bonjour", language="fr"),
        literal("مرحبا", language="ar--rtl"),
        literal('quote " backslash \\ newline \n tab \t'),
    ]
    await store.add(ref, [t(ALICE, iri(f"urn:p:{i}"), o) for i, o in enumerate(objects)])
    for i, o in enumerate(objects):
        [found] = await store.match(ref, s=ALICE, p=iri(f"urn:p:{i}"))
        assert found.o == o
        assert [x.p for x in await store.match(ref, o=o)] == [iri(f"urn:p:{i}")]


async def test_blank_nodes_keep_their_ids(store, ref):
    node = BlankTerm(id="b1")
    await store.add(ref, [t(node, NAME, literal("anonymous")), t(ALICE, KNOWS, node)])
    assert [x.o for x in await store.match(ref, s=node)] == [literal("anonymous")]
    assert [x.o for x in await store.match(ref, s=ALICE, p=KNOWS)] == [node]
    await store.add(ref, [t(node, NAME, literal("anonymous"))])
    assert await store.count(ref) == 2


async def test_add_nquads_reads_triple_terms_blank_nodes_and_graphs(store, ref):
    triples = FACTS + PROVENANCE + [t(BlankTerm(id="n1"), NAME, literal("x"), SOURCE_GRAPH)]
    text = to_nquads(triples)
    assert "<<(" in text
    assert await store.add_nquads(ref, text) == 5
    assert await store.add_nquads(ref, text) == 5  # re-sent: blank node labels are kept
    assert await store.count(ref) == 5
    assert spo(await store.match(ref, g=ALL_GRAPHS)) == spo(triples)
    [found] = await store.match(ref, o=EDGE, g=SOURCE_GRAPH)
    assert found.s == SUBGRAPH


async def test_add_nquads_large_batch_takes_the_bulk_path_idempotently(store, ref):
    n = 25_000  # above oxigraph's BULK_THRESHOLD
    text = "".join(f"<urn:e:{i}> <urn:p:edge> <<( <urn:e:{i}> <urn:p:knows> _:b{i} )>> <urn:graph:source> .\n"
                   for i in range(n))
    assert await store.add_nquads(ref, text) == n
    assert await store.add_nquads(ref, text) == n
    assert await store.count(ref, SOURCE_GRAPH) == n
    [found] = await store.match(ref, s=iri("urn:e:123"), g=SOURCE_GRAPH)
    assert found.o == quoted(iri("urn:e:123"), KNOWS, BlankTerm(id="b123"))


async def test_add_nquads_refuses_bad_syntax_with_the_line(store, ref):
    with pytest.raises(ValueError, match="line 2"):
        await store.add_nquads(ref, "<urn:a> <urn:p> <urn:b> .\n<urn:a> <urn:p> oops .\n")


async def test_remove_reports_what_existed(store, ref):
    await store.add(ref, FACTS + PROVENANCE)
    gone = [FACTS[0], PROVENANCE[0], t(CAROL, KNOWS, ALICE)]
    assert await store.remove(ref, gone) == 2
    assert spo(await store.match(ref, g=ALL_GRAPHS)) == spo(FACTS[1:])
    assert await store.remove(ref, gone) == 0
    assert await store.remove(CollectionRef(unique("u"), "nothing"), gone) == 0


async def test_count_per_graph(store, ref):
    assert await store.count(ref) == 0
    await store.add(ref, FACTS + PROVENANCE)
    assert await store.count(ref) == 4
    assert await store.count(ref, None) == 3
    assert await store.count(ref, SOURCE_GRAPH) == 1
    assert await store.count(ref, "urn:graph:retrieval") == 0


async def test_collections_are_isolated_per_user_and_collection(store):
    alice, bob = unique("alice"), unique("bob")
    a1, a2, b1 = CollectionRef(alice, "one"), CollectionRef(alice, "two"), CollectionRef(bob, "one")
    await store.add(a1, FACTS[:1])
    await store.add(a2, FACTS[1:2])
    await store.add(b1, FACTS[2:])
    assert spo(await store.match(a1, g=ALL_GRAPHS)) == spo(FACTS[:1])
    assert spo(await store.match(a2, g=ALL_GRAPHS)) == spo(FACTS[1:2])
    assert spo(await store.match(b1, g=ALL_GRAPHS)) == spo(FACTS[2:])
    assert await store.collections(alice) == ["one", "two"]
    assert await store.collections(bob) == ["one"]
    assert await store.collections(unique("nobody")) == []
    with pytest.raises(ConfigError):
        await store.collections("../" + alice)


async def test_reading_an_unknown_collection_does_not_create_it(store):
    user = unique("u")
    assert await store.match(CollectionRef(user, "ghost")) == []
    assert await store.count(CollectionRef(user, "ghost")) == 0
    assert await store.collections(user) == []


async def test_drop_deletes_the_collection_only(store, ref):
    other = CollectionRef(ref.user, "kept")
    await store.add(ref, FACTS + PROVENANCE)
    await store.add(other, FACTS)
    await store.drop(ref)
    assert await store.count(ref) == 0
    assert await store.match(ref, g=ALL_GRAPHS) == []
    assert await store.collections(ref.user) == ["kept"]
    assert await store.count(other) == 3
    await store.add(ref, FACTS[:1])  # the name can be used again
    assert await store.count(ref) == 1


# --- SPARQL --------------------------------------------------------------------------------

async def test_select_sees_the_default_graph_and_graph_clauses_see_provenance(sparql_store, ref):
    result = await sparql_store.query(ref, "SELECT ?s ?o WHERE { ?s <urn:p:knows> ?o } ORDER BY ?s")
    assert result.kind == "bindings" and list(result.variables) == ["s", "o"]
    assert [(r["s"], r["o"]) for r in result.rows] == [(ALICE, BOB), (BOB, CAROL)]
    everything = await sparql_store.query(ref, "SELECT * WHERE { ?s ?p ?o }")
    assert len(everything.rows) == 3  # provenance is not in the default graph
    source = await sparql_store.query(ref, f"SELECT ?sg WHERE {{ GRAPH <{SOURCE_GRAPH}> {{ ?sg ?p ?o }} }}")
    assert [r["sg"] for r in source.rows] == [SUBGRAPH]


async def test_triple_term_pattern(sparql_store, ref):
    result = await sparql_store.query(ref, f"""
        PREFIX tg: <{TG}>
        SELECT ?s ?p ?o WHERE {{ GRAPH <{SOURCE_GRAPH}> {{ ?sg tg:contains <<( ?s ?p ?o )>> }} }}""")
    assert [(r["s"], r["p"], r["o"]) for r in result.rows] == [(ALICE, KNOWS, BOB)]
    edge = await sparql_store.query(ref, f"SELECT ?edge WHERE {{ GRAPH ?g {{ ?sg <{TG}contains> ?edge }} }}")
    assert edge.rows[0]["edge"] == EDGE


async def test_ask_and_construct(sparql_store, ref):
    yes = await sparql_store.query(ref, "ASK { <urn:e:alice> <urn:p:knows> <urn:e:bob> }")
    no = await sparql_store.query(ref, "ASK { <urn:e:bob> <urn:p:knows> <urn:e:alice> }")
    assert (yes.kind, yes.boolean, no.boolean) == ("boolean", True, False)
    built = await sparql_store.query(ref, "CONSTRUCT { ?o <urn:p:knownBy> ?s } WHERE { ?s <urn:p:knows> ?o }")
    assert built.kind == "triples"
    assert spo(list(built.triples)) == spo([t(BOB, iri("urn:p:knownBy"), ALICE), t(CAROL, iri("urn:p:knownBy"), BOB)])


async def test_literals_come_back_typed_from_sparql(sparql_store, ref):
    await sparql_store.add(ref, [t(BOB, NAME, literal("Bob", language="en")),
                                 t(BOB, iri("urn:p:age"), literal("7", datatype=XSD + "integer"))])
    result = await sparql_store.query(ref, "SELECT ?o WHERE { <urn:e:bob> ?p ?o FILTER(isLiteral(?o)) } ORDER BY ?o")
    assert {r["o"] for r in result.rows} == {literal("Bob", language="en"), literal("7", datatype=XSD + "integer")}


@pytest.mark.parametrize("update", [
    "INSERT DATA { <urn:e:x> <urn:p:y> <urn:e:z> }",
    "DELETE WHERE { ?s ?p ?o }",
    "PREFIX ex: <urn:ex:> # a comment\n delete { ?s ?p ?o } where { ?s ?p ?o }",
    "CLEAR ALL",
    "DROP GRAPH <urn:graph:source>",
    "LOAD <http://127.0.0.1:1/data.ttl>",
    "WITH <urn:graph:source> DELETE { ?s ?p ?o } WHERE { ?s ?p ?o }",
])
async def test_updates_are_refused(sparql_store, ref, update):
    with pytest.raises(QueryError, match="not allowed.*read-only"):
        await sparql_store.query(ref, update)
    assert await sparql_store.count(ref) == 4


async def test_the_word_delete_inside_a_literal_is_just_data(sparql_store, ref):
    await sparql_store.add(ref, [t(CAROL, NAME, literal("DELETE WHERE { ?s ?p ?o }"))])
    result = await sparql_store.query(ref, 'SELECT ?s WHERE { ?s ?p "DELETE WHERE { ?s ?p ?o }" } # INSERT')
    assert [r["s"] for r in result.rows] == [CAROL]


async def test_federated_service_is_refused(sparql_store, ref):
    with pytest.raises(QueryError, match="SERVICE"):
        await sparql_store.query(ref, "SELECT * WHERE { SERVICE <http://127.0.0.1:1/sparql> { ?s ?p ?o } }")


async def test_syntax_error_says_where(sparql_store, ref):
    with pytest.raises(QueryError, match=r"SPARQL syntax error: .*1:\d+"):
        await sparql_store.query(ref, "SELECT ?s WHERE { ?s ?p }")


async def test_row_limit_sets_truncated(sparql_store, ref):
    cut = await sparql_store.query(ref, "SELECT * WHERE { ?s ?p ?o }", limit=2)
    assert len(cut.rows) == 2 and cut.truncated
    whole = await sparql_store.query(ref, "SELECT * WHERE { ?s ?p ?o }", limit=3)
    assert len(whole.rows) == 3 and not whole.truncated
    built = await sparql_store.query(ref, "CONSTRUCT WHERE { ?s ?p ?o }", limit=1)
    assert len(built.triples) == 1 and built.truncated


async def test_slow_query_times_out_and_frees_the_collection(sparql_store, ref):
    await sparql_store.add(ref, [t(iri(f"urn:e:{i}"), KNOWS, literal(str(i))) for i in range(3000)])
    with pytest.raises(QueryError, match="timed out"):
        await sparql_store.query(ref, "SELECT * WHERE { ?a ?p ?b . ?c ?q ?d . ?e ?r ?f }",
                                 limit=10**9, timeout=0.2)
    for _ in range(100):  # the worker stops at its next row and then lets the store go
        try:
            await sparql_store.drop(ref)
            break
        except TransientError:
            await asyncio.sleep(0.05)
    assert await sparql_store.count(ref) == 0


async def test_query_of_an_unknown_collection_is_empty(sparql_store):
    ghost = CollectionRef(unique("u"), "ghost")
    assert (await sparql_store.query(ghost, "ASK { ?s ?p ?o }")).boolean is False
    assert await sparql_store.collections(ghost.user) == []


async def test_engine_without_sparql_says_so(engine, store, ref):
    if engine in SPARQL_ENGINES:
        pytest.skip(f"{engine} offers SPARQL")
    with pytest.raises(QueryError, match="not supported.*pattern queries"):
        await store.query(ref, "SELECT * WHERE { ?s ?p ?o }")


# --- the embedded engine's own promises ----------------------------------------------------

async def test_oxigraph_reopens_collections_it_closed_to_stay_under_max_open(tmp_path):
    store = OxigraphTripleStore(tmp_path / "lru", max_open=2)
    refs = [CollectionRef("u", f"c{i}") for i in range(5)]
    try:
        for i, each in enumerate(refs):
            await store.add(each, [t(ALICE, NAME, literal(str(i)))])
        for i, each in enumerate(refs):
            assert [x.o for x in await store.match(each)] == [literal(str(i))]
        await store.drop(refs[0])
        assert await store.collections("u") == ["c1", "c2", "c3", "c4"]
    finally:
        await store.aclose()


async def test_oxigraph_flushes_small_writes_to_disk_once_enough_have_gone_in(tmp_path, ref):
    # Unflushed, RocksDB as pyoxigraph opens it holds up to 128 MB of memtable per column family:
    # a stream of explain traces grew a process by ~0.2 MB per question (bench/soak.py).
    store = OxigraphTripleStore(tmp_path / "flush", flush_every=5)
    folder = tmp_path / "flush" / ref.user / ref.collection
    try:
        await store.add(ref, [t(ALICE, NAME, literal(str(i))) for i in range(3)])
        unflushed = len(list(folder.glob("*.sst")))
        await store.add(ref, [t(BOB, NAME, literal(str(i))) for i in range(3)])  # 6 quads: over the budget
        assert len(list(folder.glob("*.sst"))) > unflushed
        assert await store.count(ref) == 6
    finally:
        await store.aclose()


async def test_oxigraph_instances_on_one_directory_share_their_open_stores(tmp_path, ref):
    writer, reader = OxigraphTripleStore(tmp_path), OxigraphTripleStore(tmp_path)
    try:
        await writer.add(ref, FACTS)
        assert await reader.count(ref) == 3  # RocksDB would refuse a second open in one process
        await writer.aclose()
        assert (await reader.query(ref, "ASK { <urn:e:alice> ?p ?o }")).boolean is True
    finally:
        await reader.aclose()
