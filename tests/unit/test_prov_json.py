"""An explain trace written as PROV-JSON and read back by the `prov` package: records, relations, start times,
quoted edges as rdf:Statement entities with their terms as attributes, ids that expand back to our IRIs, and a stable, order-free output."""

from __future__ import annotations

import datetime
import json
import random
import warnings

import pytest

prov_model = pytest.importorskip("prov.model")
prov_identifier = pytest.importorskip("prov.identifier")

from tracegraph.base.provenance import extraction, query  # noqa: E402
from tracegraph.base.provenance.prov_json import quoted_triple_iri, to_prov_json  # noqa: E402
from tracegraph.base.provenance.uris import agent_uri, chunk_uri, entity_uri, relation_uri, subgraph_uri  # noqa: E402
from tracegraph.base.provenance.vocab import PROV, RDF, RDFS, SKOS, TG  # noqa: E402
from tracegraph.schemas.rdf import BlankTerm, Triple, TripleTerm, iri, literal  # noqa: E402

SID = "7d0c"
QUESTION = query.question_uri(SID)
STEPS = {step: query.step_uri(step, SID) for step in ("grounding", "exploration", "focus", "synthesis")}
STARTED = "2026-03-01T09:30:15.250000Z"
STAMP = "2026-01-01T00:00:00Z"
DOC = "urn:trustgraph:doc:helios"
CHUNK = chunk_uri(DOC, 1, 1000, 100)
SUBGRAPH = subgraph_uri(CHUNK, "offline")
COMPONENT = extraction.Component("chunker", "1.2")
HELIOS, CORVID = entity_uri("Helios Grid"), entity_uri("Corvid Analytics")
FACT = Triple(s=iri(HELIOS), p=iri(relation_uri("depends on")), o=iri(CORVID))
DEFINITION = literal("Helios Grid is a regional \"energy\" operator.")


def trace() -> list[Triple]:
    usage = query.Usage(in_token=812, out_token=95, model="stub-llm")
    edges = [query.SelectedEdge(s=FACT.s, p=FACT.p, o=FACT.o, reasoning="names the dependency", score=0.91,
                                concept="Helios Grid"),
             query.SelectedEdge(s=iri(HELIOS), p=SKOS.definition, o=DEFINITION, reasoning="defines the operator")]
    return [
        *query.question_triples(QUESTION, "Who does Helios Grid depend on?", STARTED),
        *query.grounding_triples(STEPS["grounding"], QUESTION, ["Helios Grid", "dependency"], usage, "LLM"),
        *query.exploration_triples(STEPS["exploration"], STEPS["grounding"], 12, [HELIOS, CORVID]),
        *query.focus_triples(STEPS["focus"], STEPS["exploration"], SID, edges, usage, "LLM", notes=["2 of 12 kept"]),
        *query.synthesis_triples(STEPS["synthesis"], STEPS["focus"], query.answer_document_uri(SID), usage, "LLM"),
        *extraction.document_triples(DOC, title="Helios Grid", mime_type="text/plain", date="2024-01-01"),
        *extraction.chunk_triples(CHUNK, DOC, index=1, char_offset=0, char_length=480, chunk_size=1000,
                                  chunk_overlap=100, component=COMPONENT, timestamp=STAMP),
        *extraction.subgraph_triples(SUBGRAPH, CHUNK, [FACT], component=COMPONENT, timestamp=STAMP,
                                     extractor="offline", llm_model=None),
    ]


def read(document: dict) -> prov_model.ProvDocument:
    """Reads as a PROV tool would, with every warning (`prov`'s "3.3.0 will reject this" too) an error."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return prov_model.ProvDocument.deserialize(content=json.dumps(document), format="json")


def record(doc: prov_model.ProvDocument, uri: str) -> prov_model.ProvRecord:
    found = [r for r in doc.get_records() if r.identifier is not None and r.identifier.uri == uri]
    assert len(found) == 1, f"{uri}: {found}"
    return found[0]


def values(rec: prov_model.ProvRecord, attribute: str) -> set[str]:
    """The attribute's values as text; a qualified name as its `prefix:local`."""
    return {str(v) for k, v in rec.attributes if str(k) == attribute}


def names(rec: prov_model.ProvRecord, attribute: str) -> set[str]:
    """The attribute's values, which must read back as qualified names, as the IRIs they expand to."""
    found = [v for k, v in rec.attributes if str(k) == attribute]
    assert found and all(isinstance(v, prov_identifier.QualifiedName) for v in found), found
    return {v.uri for v in found}


def test_the_question_is_an_activity_with_its_start_time() -> None:
    doc = read(to_prov_json(trace()))
    question = record(doc, QUESTION)
    assert isinstance(question, prov_model.ProvActivity)
    assert question.get_startTime() == datetime.datetime(2026, 3, 1, 9, 30, 15, 250000, tzinfo=datetime.UTC)
    assert names(question, "prov:type") == {TG.Question.iri, TG.GraphRagQuestion.iri}
    assert values(question, "tg:query") == {"Who does Helios Grid depend on?"}
    assert values(question, "rdfs:label") == {"GraphRAG Question"}


def test_the_four_steps_are_entities_derived_one_from_another() -> None:
    doc = read(to_prov_json(trace()))
    for step, kind in zip(STEPS.values(), (TG.Grounding, TG.Exploration, TG.Focus, TG.Synthesis)):
        rec = record(doc, step)
        assert isinstance(rec, prov_model.ProvEntity) and kind.iri in names(rec, "prov:type")
    derived = {(d.args[0].uri, d.args[1].uri) for d in doc.get_records(prov_model.ProvDerivation)}
    assert derived == {
        (STEPS["grounding"], QUESTION), (STEPS["exploration"], STEPS["grounding"]),
        (STEPS["focus"], STEPS["exploration"]), (STEPS["synthesis"], STEPS["focus"]),
        (CHUNK, DOC), (SUBGRAPH, CHUNK),
    }
    synthesis = record(doc, STEPS["synthesis"])
    assert names(synthesis, "prov:type") == {TG.Synthesis.iri, TG.Answer.iri}
    assert values(synthesis, "tg:document") == {f"tgq:synthesis:{SID}"}
    assert names(synthesis, "tg:document") == {query.answer_document_uri(SID)}
    assert values(synthesis, "tg:inToken") == {"812"} and values(synthesis, "tg:llmModel") == {"stub-llm"}
    assert values(record(doc, STEPS["grounding"]), "tg:concept") == {"Helios Grid", "dependency"}


def statement(doc: prov_model.ProvDocument, owner: prov_model.ProvRecord, attribute: str) -> prov_model.ProvRecord:
    """The rdf:Statement entity `owner`'s attribute refers to (one quoted triple)."""
    [uri] = names(owner, attribute)
    found = record(doc, uri)
    assert isinstance(found, prov_model.ProvEntity)
    assert names(found, "prov:type") == {"http://www.w3.org/1999/02/22-rdf-syntax-ns#Statement"}
    return found


def test_edge_selections_carry_the_quoted_edge_as_a_statement_entity() -> None:
    doc = read(to_prov_json(trace()))
    focus = record(doc, STEPS["focus"])
    assert names(focus, "tg:selectedEdge") == {query.edge_selection_uri(SID, 0), query.edge_selection_uri(SID, 1)}
    assert values(focus, "rdfs:comment") == {"LLM", "2 of 12 kept"}
    first = record(doc, query.edge_selection_uri(SID, 0))
    second = record(doc, query.edge_selection_uri(SID, 1))
    assert isinstance(first, prov_model.ProvEntity) and names(first, "prov:type") == {TG.EdgeSelection.iri}
    edge = statement(doc, first, "tg:edge")
    assert names(edge, "rdf:subject") == {HELIOS} and names(edge, "rdf:predicate") == {relation_uri("depends on")}
    assert names(edge, "rdf:object") == {CORVID}
    assert values(first, "tg:score") == {"0.9100"} and values(first, "tg:concept") == {"Helios Grid"}
    defined = statement(doc, second, "tg:edge")
    assert names(defined, "rdf:predicate") == {SKOS.definition.iri}
    assert values(defined, "rdf:object") == {DEFINITION.value}, "a literal object stays a value, quotes and all"
    assert values(second, "tg:reasoning") == {"defines the operator"} and not values(second, "tg:score")
    selected_fact = record(doc, quoted_triple_iri(TripleTerm(triple=FACT)).iri)
    assert selected_fact is record(doc, next(iter(names(record(doc, SUBGRAPH), "tg:contains")))), \
        "the edge a Focus selected and the fact a Subgraph contains are one record"


def test_extraction_activities_used_their_input_and_name_their_agent() -> None:
    doc = read(to_prov_json(trace()))
    generated = {(g.args[0].uri, g.args[1].uri) for g in doc.get_records(prov_model.ProvGeneration)}
    assert {entity for entity, _ in generated} == {CHUNK, SUBGRAPH}
    for entity, activity in generated:
        act = record(doc, activity)
        assert isinstance(act, prov_model.ProvActivity)
        assert act.get_startTime() == datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
        assert values(act, "tg:componentVersion") == {"1.2"}
    used = {(u.args[0].uri, u.args[1].uri) for u in doc.get_records(prov_model.ProvUsage)}
    assert used == {(a, {CHUNK: DOC, SUBGRAPH: CHUNK}[e]) for e, a in generated}
    associated = {(a.args[0].uri, a.args[1].uri) for a in doc.get_records(prov_model.ProvAssociation)}
    assert associated == {(a, agent_uri("chunker")) for _, a in generated}
    agent = record(doc, agent_uri("chunker"))
    assert isinstance(agent, prov_model.ProvAgent) and values(agent, "rdfs:label") == {"chunker"}
    subgraph = record(doc, SUBGRAPH)
    assert names(subgraph, "tg:contains") == {quoted_triple_iri(TripleTerm(triple=FACT)).iri}
    assert names(statement(doc, subgraph, "tg:contains"), "rdf:object") == {CORVID}
    assert names(record(doc, CHUNK), "prov:type") == {TG.Chunk.iri}


def test_the_document_survives_prov_writing_and_reading_it_again() -> None:
    doc = read(to_prov_json(trace()))
    again = prov_model.ProvDocument.deserialize(content=doc.serialize(format="json"), format="json")
    assert again == doc
    assert len(again.get_records()) == len(doc.get_records()) > 20


def test_ids_are_declared_prefixes_that_expand_to_our_iris() -> None:
    document = to_prov_json(trace())
    prefixes = document["prefix"]
    assert prefixes["tgq"] == "urn:trustgraph:" and prefixes["tg"] == TG.base and prefixes["prov"] == PROV.base
    assert prefixes["chunk"] == "urn:chunk:"  # minted for a namespace with no fixed prefix
    assert f"tgq:question:{SID}" in document["activity"]
    for kind in ("entity", "activity", "agent"):
        for key in document[kind]:
            prefix, local = key.split(":", 1)
            assert prefix in prefixes and local
    doc = read(document)
    exploration = record(doc, STEPS["exploration"])
    assert values(exploration, "tg:entity") == {"tgi:e/helios-grid", "tgi:e/corvid-analytics"}
    assert names(exploration, "tg:entity") == {HELIOS, CORVID}
    assert {r.identifier.uri for r in doc.get_records() if r.identifier} >= {QUESTION, DOC, CHUNK, SUBGRAPH}


def test_output_is_the_same_for_any_order_and_repeats() -> None:
    triples = trace()
    shuffled = triples + triples[:5]
    random.Random(4).shuffle(shuffled)
    assert json.dumps(to_prov_json(shuffled)) == json.dumps(to_prov_json(triples))
    assert list(to_prov_json(triples)["entity"]) == sorted(to_prov_json(triples)["entity"])


def test_unknown_namespaces_blank_nodes_and_typed_literals() -> None:
    thing, vocab, blank = "http://example.org/data/thing", "http://example.org/vocab#", BlankTerm(id="b0")
    document = to_prov_json([
        Triple(s=iri(thing), p=iri(vocab + "size"), o=literal("3", datatype=vocab + "n")),
        Triple(s=iri(thing), p=RDFS.label, o=literal("chose", language="fr")),
        Triple(s=iri(thing), p=RDFS.comment, o=iri("mailto:someone@example.org")),
        Triple(s=iri(thing), p=PROV.wasDerivedFrom, o=blank),
        Triple(s=blank, p=RDF.type, o=TG.Document),
        Triple(s=iri(thing), p=PROV.startedAtTime, o=literal("not a time")),
    ])
    assert document["prefix"]["data"] == "http://example.org/data/"
    assert document["prefix"]["vocab"] == "http://example.org/vocab#"
    assert document["prefix"]["bnode"] == "urn:tracegraph:bnode:"
    attrs = document["activity"]["data:thing"]  # prov:startedAtTime's domain, though not a valid time
    assert attrs["vocab:size"] == {"$": "3", "type": "vocab:n"}
    assert attrs["rdfs:label"] == {"$": "chose", "lang": "fr"}
    assert attrs["rdfs:comment"] == {"$": "mailto:someone@example.org", "type": "xsd:anyURI"}
    assert attrs["prov:startedAtTime"] == "not a time" and "prov:startTime" not in attrs
    assert document["wasDerivedFrom"] == {"_:wDF1": {"prov:generatedEntity": "data:thing",
                                                     "prov:usedEntity": "bnode:b0"}}
    doc = read(document)
    assert record(doc, "urn:tracegraph:bnode:b0").get_type().localpart == "Entity"


def test_what_prov_cannot_hold_is_refused_not_dropped() -> None:
    with pytest.raises(ValueError, match="no record for the subject"):
        to_prov_json([Triple(s=TripleTerm(triple=FACT), p=TG.score, o=literal("1"))])
    with pytest.raises(ValueError, match="formal attribute"):
        to_prov_json([Triple(s=iri(HELIOS), p=iri(PROV.base + "entity"), o=iri(CORVID))])


def test_a_report_derived_from_a_quoted_fact_is_a_derivation_and_nested_quotes_nest() -> None:
    report, said = "urn:trustgraph:community-report:c1", iri("https://trustgraph.ai/r/said")
    claim = TripleTerm(triple=Triple(s=iri(CORVID), p=said, o=TripleTerm(triple=FACT)))
    doc = read(to_prov_json([Triple(s=iri(report), p=PROV.wasDerivedFrom, o=TripleTerm(triple=FACT)),
                             Triple(s=iri(report), p=PROV.wasDerivedFrom, o=claim)]))
    derived = {d.args[1].uri for d in doc.get_records(prov_model.ProvDerivation) if d.args[0].uri == report}
    assert derived == {quoted_triple_iri(TripleTerm(triple=FACT)).iri, quoted_triple_iri(claim).iri}
    outer = record(doc, quoted_triple_iri(claim).iri)
    assert names(outer, "rdf:subject") == {CORVID} and names(outer, "rdf:predicate") == {said.iri}
    inner = statement(doc, outer, "rdf:object")
    assert names(inner, "rdf:subject") == {HELIOS} and names(inner, "rdf:object") == {CORVID}
