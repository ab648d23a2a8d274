"""The tg: vocabulary in code and the OWL ontology in specs/ontology/ list the same terms; and
`is_knowledge` keeps facts about the world and nothing our library or pipeline says about itself."""

import doctest
from pathlib import Path

import pyoxigraph
import pytest

import tracegraph.base.provenance.vocab as vocab
from tracegraph.base.provenance import extraction, query
from tracegraph.base.provenance.vocab import DC, DCTERMS, PROV, RDF, RDFS, SCHEMA, SKOS, TG, is_knowledge
from tracegraph.schemas.rdf import BlankTerm, Triple, iri, literal, quoted

ONTOLOGY = Path(__file__).resolve().parents[2] / "specs" / "ontology" / "tracegraph.ttl"
OWL = "http://www.w3.org/2002/07/owl#"


def declared_terms() -> set[str]:
    store = pyoxigraph.Store()
    store.load(path=str(ONTOLOGY), format=pyoxigraph.RdfFormat.TURTLE)
    kinds = {pyoxigraph.NamedNode(OWL + k) for k in ("Class", "ObjectProperty", "DatatypeProperty")}
    rdf_type = pyoxigraph.NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")
    return {q.subject.value.removeprefix(TG.base) for q in store.quads_for_pattern(None, rdf_type, None)
            if q.object in kinds and q.subject.value.startswith(TG.base)}


def test_every_code_term_is_declared_and_every_declared_term_is_in_code():
    assert TG.terms == declared_terms()


def test_unknown_term_fails_at_once():
    with pytest.raises(AttributeError, match="not a term"):
        TG.queryy
    assert TG.query.iri == "https://trustgraph.ai/ns/query"


# ---------------------------------------------------------------- what is knowledge

E = "https://trustgraph.ai/e/"
R = "https://trustgraph.ai/r/"
HELIOS = iri(E + "helios-grid")
CORVID = iri(E + "corvid-analytics")
DOC = iri("https://example.org/library/b-boy-song")  # a document id a user chose: only predicates tell
DEPENDS = Triple(s=HELIOS, p=iri(R + "depends-on"), o=CORVID)


def about(p, o, s=DOC) -> Triple:
    return Triple(s=s, p=p, o=o)


EXCLUDED = {
    "dc:title": about(DC.title, literal("B Boy (song)")),
    "dc:date": about(DC.date, literal("2026-01-01T00:00:00Z")),
    "dc:source": about(DC.source, iri("https://en.wikipedia.org/wiki/B_Boy")),
    "dc:creator": about(DC.creator, literal("Wikipedia")),
    "dcterms:created": about(iri(DCTERMS + "created"), literal("2026-01-01")),
    "tg:mimeType": about(TG.mimeType, literal("text/plain")),
    "tg:pageCount": about(TG.pageCount, literal(3)),
    "tg:contains": about(TG.contains, quoted(HELIOS, iri(R + "depends-on"), CORVID)),
    "tg:query": about(TG.query, literal("What does Helios Grid depend on?")),
    "prov:wasDerivedFrom": about(PROV.wasDerivedFrom, iri("https://example.org/library/other")),
    "prov:startedAtTime": about(PROV.startedAtTime, literal("2026-01-01T00:00:00Z")),
    "a tg:Document": about(RDF.type, TG.Document),
    "a tg:Chunk": about(RDF.type, TG.Chunk),
    "a prov:Entity": about(RDF.type, PROV.Entity),
    "a prov:Activity": about(RDF.type, PROV.Activity),
    "a schema:DigitalDocument": about(RDF.type, SCHEMA.DigitalDocument),
    "a owl:Class": about(RDF.type, iri(OWL + "Class"), s=iri(E + "Company")),
    "schema:url": about(SCHEMA.url, iri("https://en.wikipedia.org/wiki/B_Boy")),
    "schema:keywords": about(SCHEMA.keywords, literal("hip hop")),
    "schema:name": about(SCHEMA.name, literal("B Boy (song)")),
    "schema:description": about(SCHEMA.description, literal("a song")),
    "schema:author": about(SCHEMA.author, literal("Wikipedia")),
    "rdfs:label": about(RDFS.label, literal("Helios Grid"), s=HELIOS),
    "rdfs:comment": about(RDFS.comment, literal("a note"), s=HELIOS),
    "rdfs:subClassOf": about(iri(RDFS.base + "subClassOf"), iri(E + "Org"), s=iri(E + "Company")),
    "owl:sameAs": about(iri(OWL + "sameAs"), CORVID, s=HELIOS),
    "quoted-triple subject": about(iri(R + "reported-by"), iri(E + "reuters"),
                                   s=quoted(HELIOS, iri(R + "depends-on"), CORVID)),
    "urn:chunk: subject": about(iri(R + "mentions"), HELIOS, s=iri("urn:chunk:abc")),
    "urn:page: subject": about(iri(R + "mentions"), HELIOS, s=iri("urn:page:abc")),
    "urn:trustgraph: subject": about(iri(R + "about"), HELIOS, s=iri("urn:trustgraph:doc:abc")),
    "urn:graph: subject": about(iri(R + "holds"), HELIOS, s=iri("urn:graph:source")),
    "subgraph subject": about(iri(R + "mentions"), HELIOS, s=iri("https://trustgraph.ai/subgraph/abc")),
}

KEPT = {
    "domain relation": DEPENDS,
    "domain literal": about(iri(R + "employs"), literal("2,400 people"), s=HELIOS),
    "a domain class": about(RDF.type, iri(E + "Company"), s=HELIOS),
    "skos:definition": about(SKOS.definition, literal("a regional energy operator"), s=HELIOS),
    "blank-node subject": about(iri(R + "depends-on"), CORVID, s=BlankTerm(id="b0")),
    "quoted-triple object": about(iri(R + "denies"), quoted(HELIOS, iri(R + "owns"), CORVID), s=CORVID),
    "a document about the world": about(iri(R + "performed-by"), iri(E + "meek-mill"), s=iri(E + "b-boy-song")),
}


@pytest.mark.parametrize("kind", EXCLUDED)
def test_plumbing_provenance_and_library_metadata_are_never_knowledge(kind):
    assert not is_knowledge(EXCLUDED[kind])


@pytest.mark.parametrize("kind", KEPT)
def test_facts_about_the_world_are_knowledge(kind):
    assert is_knowledge(KEPT[kind])


def test_nothing_the_pipeline_writes_about_itself_is_knowledge():
    component = extraction.Component("chunker", "1.0")
    chunk, page, subgraph = "urn:chunk:c1", "urn:page:p1", "https://trustgraph.ai/subgraph/s1"
    written = [
        *extraction.document_triples(DOC.iri, title="B Boy (song)", mime_type="text/plain", date="2026-01-01",
                                     source="https://en.wikipedia.org/wiki/B_Boy", creator="Wikipedia",
                                     page_count=1),
        *extraction.page_triples(page, DOC.iri, number=1, component=component, timestamp="2026-01-01",
                                 char_length=100),
        *extraction.chunk_triples(chunk, page, index=1, char_offset=0, char_length=100, chunk_size=500,
                                  chunk_overlap=50, component=component, timestamp="2026-01-01"),
        *extraction.subgraph_triples(subgraph, chunk, [DEPENDS], component=component, timestamp="2026-01-01",
                                     extractor="offline"),
        *extraction.failed_extraction_triples(subgraph, chunk, component=component, timestamp="2026-01-01",
                                              extractor="llm", error="timeout"),
        *query.question_triples("urn:trustgraph:question:q1", "What does Helios Grid depend on?", "2026-01-01"),
        *query.exploration_triples("urn:trustgraph:prov:exploration:q1", "urn:trustgraph:prov:grounding:q1", 3,
                                   [HELIOS.iri]),
    ]
    assert [t for t in written if is_knowledge(t)] == []


def test_the_rule_is_a_table_that_says_why():
    for table in (vocab.NOT_KNOWLEDGE_NAMESPACES, vocab.NOT_KNOWLEDGE_PREDICATES, vocab.NOT_KNOWLEDGE_CLASSES,
                  vocab.NOT_KNOWLEDGE_CLASS_NAMESPACES, vocab.NOT_KNOWLEDGE_SUBJECTS):
        assert table and all(reason.strip() for reason in table.values())
    assert SKOS.base not in vocab.NOT_KNOWLEDGE_NAMESPACES, "the offline extractor's definitions are knowledge"


def test_doctests():
    result = doctest.testmod(vocab)
    assert result.attempted > 0 and result.failed == 0
