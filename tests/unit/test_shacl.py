"""SHACL shapes of a valid trace (specs/ontology/shapes.ttl): a complete GraphRAG trace with the
extraction provenance of one of its edges conforms, and each kind of damage is reported."""

from __future__ import annotations

from tracegraph.base.provenance import extraction, query
from tracegraph.base.provenance.shacl import ShaclReport, reified_graph, validate_nquads, validate_trace
from tracegraph.base.provenance.uris import chunk_uri, page_uri, subgraph_uri
from tracegraph.base.provenance.vocab import PROV, RDF, RDFS, TG
from tracegraph.base.stores.protocol import RETRIEVAL_GRAPH, SOURCE_GRAPH
from tracegraph.base.stores.terms import to_nquads
from tracegraph.schemas.rdf import Triple, iri, literal, quoted

SID = "3f2c9d1e-0000-4000-8000-000000000001"
QUESTION = query.question_uri(SID)
GROUNDING, EXPLORATION, FOCUS, SYNTHESIS = (query.step_uri(step, SID)
                                            for step in ("grounding", "exploration", "focus", "synthesis"))
DOC = "urn:doc:helios"
PAGE = page_uri(DOC, 1)
CHUNK = chunk_uri(PAGE, 1, 1000, 100)
SUBGRAPH = subgraph_uri(CHUNK, "offline")
HELIOS, CORVID = "https://trustgraph.ai/e/helios-grid", "https://trustgraph.ai/e/corvid-analytics"
DEPENDS_ON = iri("https://trustgraph.ai/r/depends-on")
DEFINITION = iri("http://www.w3.org/2004/02/skos/core#definition")
FACT = Triple(s=iri(HELIOS), p=DEPENDS_ON, o=iri(CORVID))
COMPONENT = extraction.Component("kg-extract", "0.1.0")
STAMP = "2024-01-15T10:30:00Z"


def graph_rag_trace() -> list[Triple]:
    usage = query.Usage(in_token=812, out_token=95, model="stub-llm")
    edges = [query.SelectedEdge(s=FACT.s, p=FACT.p, o=FACT.o, reasoning="names the dependency",
                                score=0.91, concept="Helios Grid"),
             query.SelectedEdge(s=iri(HELIOS), p=DEFINITION, o=literal("Helios Grid is a regional energy operator."),
                                reasoning="defines the operator", score=0.5)]
    return [
        *query.question_triples(QUESTION, "Who does Helios Grid depend on?", query.now()),
        *query.grounding_triples(GROUNDING, QUESTION, ["Helios Grid", "dependency"], usage, "LLM (stub-llm)"),
        *query.exploration_triples(EXPLORATION, GROUNDING, 12, [HELIOS, CORVID]),
        *query.focus_triples(FOCUS, EXPLORATION, SID, edges, usage, "LLM (stub-llm)", notes=["2 of 12 kept"]),
        *query.synthesis_triples(SYNTHESIS, FOCUS, query.answer_document_uri(SID), usage, "LLM (stub-llm)"),
    ]


def extraction_provenance() -> list[Triple]:
    return [
        *extraction.document_triples(DOC, title="Helios Grid", mime_type="application/pdf", date="2024-01-01",
                                     page_count=1),
        *extraction.page_triples(PAGE, DOC, number=1, component=COMPONENT, timestamp=STAMP, char_length=480),
        *extraction.chunk_triples(CHUNK, PAGE, index=1, char_offset=0, char_length=480, chunk_size=1000,
                                  chunk_overlap=100, component=COMPONENT, timestamp=STAMP),
        *extraction.subgraph_triples(SUBGRAPH, CHUNK, [FACT], component=COMPONENT, timestamp=STAMP,
                                     extractor="offline"),
    ]


def valid() -> list[Triple]:
    return [*graph_rag_trace(), *extraction_provenance()]


def without(triples: list[Triple], s: str, p) -> list[Triple]:
    out = [t for t in triples if not (t.s == iri(s) and t.p == p)]
    assert len(out) < len(triples), "the test meant to remove something"
    return out


def replaced(triples: list[Triple], s: str, p, o) -> list[Triple]:
    return [*without(triples, s, p), Triple(s=iri(s), p=p, o=o, g=RETRIEVAL_GRAPH)]


def assert_reported(report: ShaclReport, *fragments: str) -> None:
    assert not report.conforms
    assert any(all(f in m for f in fragments) for m in report.messages), report.messages


def test_a_complete_trace_with_extraction_provenance_conforms():
    triples = valid()
    assert {t.g for t in triples} == {RETRIEVAL_GRAPH, SOURCE_GRAPH, None}  # the union is validated
    report = validate_trace(triples)
    assert report.conforms, report.messages
    assert report.messages == []


def test_the_reified_view_shares_one_statement_per_triple_term():
    graph = reified_graph(valid())
    from rdflib import RDF as R, URIRef

    statements = set(graph.subjects(R.type, R.Statement))
    assert len(statements) == 2  # two selected edges; the contained fact is the first of them
    shared = graph.value(URIRef(query.edge_selection_uri(SID, 0)), URIRef(TG.edge.iri))
    assert shared in statements
    assert (URIRef(SUBGRAPH), URIRef(TG.contains.iri), shared) in graph
    assert graph.value(shared, R.predicate) == URIRef(DEPENDS_ON.iri)


def test_missing_query_is_reported():
    report = validate_trace(without(valid(), QUESTION, TG.query))
    assert_reported(report, f"<{QUESTION}>", "tg:query", "exactly one non-empty string tg:query")
    assert len(report.messages) == 1


def test_empty_query_is_reported():
    report = validate_trace(replaced(valid(), QUESTION, TG.query, literal("  ")))
    assert_reported(report, f"<{QUESTION}>", "tg:query")


def test_focus_derived_from_grounding_instead_of_exploration_is_reported():
    report = validate_trace(replaced(valid(), FOCUS, PROV.wasDerivedFrom, iri(GROUNDING)))
    assert_reported(report, f"<{FOCUS}>", "prov:wasDerivedFrom", "exactly one tg:Exploration", f"<{GROUNDING}>")


def test_edge_selection_without_edge_is_reported():
    selection = query.edge_selection_uri(SID, 1)
    report = validate_trace(without(valid(), selection, TG.edge))
    assert_reported(report, f"<{selection}>", "tg:edge", "quotes exactly one edge")
    assert len(report.messages) == 1


def test_non_numeric_token_count_is_reported():
    report = validate_trace(replaced(valid(), SYNTHESIS, TG.inToken, literal("many")))
    assert_reported(report, f"<{SYNTHESIS}>", "tg:inToken", "non-negative integer", '"many"')


def test_unknown_extractor_is_reported():
    triples = [t for t in valid() if not (t.s == iri(SUBGRAPH) and t.p == TG.extractor)]
    triples.append(Triple(s=iri(SUBGRAPH), p=TG.extractor, o=literal("magic"), g=SOURCE_GRAPH))
    report = validate_trace(triples)
    assert_reported(report, f"<{SUBGRAPH}>", "tg:extractor", '"llm" or "offline"', '"magic"')


def test_missing_document_description_breaks_the_page_link():
    """Provenance alone (urn:graph:source) does not say the page's parent is a tg:Document."""
    report = validate_trace([t for t in valid() if t.g is not None])
    assert_reported(report, f"<{PAGE}>", "prov:wasDerivedFrom", "tg:Document")


def test_malformed_quoted_triple_is_reported_as_the_triple_term():
    bad = quoted(literal("not a subject"), DEPENDS_ON, iri(CORVID))
    triples = [*valid(), Triple(s=iri(SUBGRAPH), p=TG.contains, o=bad, g=SOURCE_GRAPH)]
    report = validate_trace(triples)
    assert_reported(report, '<< "not a subject"', "rdf:subject", "an IRI or blank node")


def test_wrong_question_type_and_uri_are_reported():
    triples = [t for t in valid() if not (t.s == iri(QUESTION) and t.p == RDF.type and t.o == TG.Question)]
    assert_reported(validate_trace(triples), f"<{QUESTION}>", "rdf:type", "tg:Question")
    other = "urn:example:q"
    moved = [Triple(s=iri(other), p=t.p, o=t.o, g=t.g) if t.s == iri(QUESTION) else t for t in valid()]
    assert_reported(validate_trace(moved), f"<{other}>", "urn:trustgraph:question:")


def test_a_step_that_lost_its_type_is_still_caught():
    triples = [t for t in valid() if not (t.s == iri(FOCUS) and t.o == TG.Focus)]
    report = validate_trace(triples)
    assert_reported(report, f"<{FOCUS}>", "rdf:type", "what has a tg:selectedEdge is a tg:Focus")
    assert_reported(report, f"<{SYNTHESIS}>", "prov:wasDerivedFrom", "exactly one tg:Focus")


def test_docrag_synthesis_from_exploration_is_not_held_to_graph_rag_rules():
    sid = "d0c"
    exploration, synthesis = f"urn:trustgraph:docrag:{sid}/exploration", f"urn:trustgraph:docrag:{sid}/synthesis"
    docrag = [*query.grounding_triples(f"urn:trustgraph:docrag:{sid}/grounding", QUESTION, ["x"], None, "offline")]
    docrag += [Triple(s=iri(exploration), p=p, o=o, g=RETRIEVAL_GRAPH) for p, o in [
        (RDF.type, PROV.Entity), (RDF.type, TG.Exploration), (TG.chunkCount, literal(3)),
        (PROV.wasDerivedFrom, iri(f"urn:trustgraph:docrag:{sid}/grounding"))]]
    docrag += [Triple(s=iri(synthesis), p=p, o=o, g=RETRIEVAL_GRAPH) for p, o in [
        (RDF.type, PROV.Entity), (RDF.type, TG.Synthesis), (RDFS.label, literal("Synthesis")),
        (PROV.wasDerivedFrom, iri(exploration))]]
    report = validate_trace([*valid(), *docrag])
    assert report.conforms, report.messages
    # The same chain minted under GraphRAG URIs is held to them.
    graph_rag = [Triple(s=iri(SYNTHESIS + "-2"), p=p, o=o, g=RETRIEVAL_GRAPH) for p, o in [
        (RDF.type, PROV.Entity), (RDF.type, TG.Synthesis), (RDF.type, TG.Answer), (PROV.wasDerivedFrom, iri(exploration))]]
    assert_reported(validate_trace([*valid(), *docrag, *graph_rag]), "exactly one tg:Focus")


def test_nquads_round_trip_validates_the_same():
    assert validate_nquads(to_nquads(valid())).conforms
    report = validate_nquads(to_nquads(without(valid(), QUESTION, TG.query)))
    assert_reported(report, "tg:query")


def passage_trace() -> list[Triple]:
    """The valid trace with what passage retrieval adds: PageRank seeds on the Exploration, a PPR score
    on an edge selection, the extraction that names the chunk's entities, and a Document RAG-style
    chunk selection on the same Exploration."""
    from tracegraph.base.provenance import passages
    from tracegraph.base.retrieval.ppr import RankedPassage, Seed
    seeds = [Seed(CHUNK, 0.343, "passage: dense #1, BM25 #1"), Seed(HELIOS, 1.0, "named in the question")]
    kept = [RankedPassage(CHUNK, DOC, "Helios Grid", 1.0, 0.7, 12.5)]
    edge = query.SelectedEdge(s=FACT.s, p=FACT.p, o=FACT.o, reasoning="from passage #1", score=0.6, ppr=1.0)
    return [*query.question_triples(QUESTION, "Who does Helios Grid depend on?", query.now()),
            *query.grounding_triples(GROUNDING, QUESTION, ["Helios Grid"], None, "offline"),
            *query.exploration_triples(EXPLORATION, GROUNDING, 3, [HELIOS]),
            *query.focus_triples(FOCUS, EXPLORATION, SID, [edge], None, "offline"),
            *query.synthesis_triples(SYNTHESIS, FOCUS, None, None, "offline"),
            *extraction_provenance(),
            *passages.seed_triples(EXPLORATION, seeds, lambda i: query.seed_uri(SID, i)),
            *passages.chunk_selection_triples(EXPLORATION, kept, lambda i: f"urn:trustgraph:docrag:{SID}/chunk/{i}"),
            *extraction.subgraph_triples(SUBGRAPH, CHUNK, [FACT], component=COMPONENT, timestamp=STAMP,
                                         extractor="offline", mentions=[HELIOS, CORVID])]


def test_passage_retrieval_terms_conform_and_broken_ones_are_reported():
    trace = passage_trace()
    assert validate_trace(trace).conforms, validate_trace(trace).messages
    seed = query.seed_uri(SID, 0)
    assert_reported(validate_trace(without(trace, seed, TG.seedNode)), "PprSeed names exactly one node")
    assert_reported(validate_trace(replaced(trace, seed, TG.seedWeight, literal("heavy"))), "seedWeight")
    selection = f"urn:trustgraph:docrag:{SID}/chunk/0"
    assert_reported(validate_trace(replaced(trace, selection, TG.rank, literal("0"))), "positive integer")
    assert_reported(validate_trace(without(trace, selection, TG.chunk)), "ChunkSelection names exactly one chunk")
    edge = query.edge_selection_uri(SID, 0)
    assert_reported(validate_trace(replaced(trace, edge, TG.pprScore, literal("-1"))), "pprScore")


def empty_traces() -> list[Triple]:
    """A GraphRAG trace that found no edge and a Document RAG trace that retrieved no chunk, each
    saying so (tg:NothingFound)."""
    from tracegraph.base.provenance import docrag
    question, grounding = docrag.question_uri(SID), docrag.step_uri("grounding", SID)
    exploration, synthesis = docrag.step_uri("exploration", SID), docrag.step_uri("synthesis", SID)
    return [
        *query.question_triples(QUESTION, "Who founded Orbis Systems?", query.now()),
        *query.grounding_triples(GROUNDING, QUESTION, ["Orbis Systems"], None, "offline"),
        *query.exploration_triples(EXPLORATION, GROUNDING, 0, []),
        *query.nothing_found_triples(EXPLORATION, "no edge near the question"),
        *query.focus_triples(FOCUS, EXPLORATION, SID, [], None, "no edges to select from"),
        *query.nothing_found_triples(FOCUS, "no edge was selected"),
        *query.synthesis_triples(SYNTHESIS, FOCUS, None, None, "offline"),
        *docrag.question_triples(question, "Who founded Orbis Systems?", query.now()),
        *query.grounding_triples(grounding, question, ["Orbis Systems"], None, "offline"),
        *docrag.exploration_triples(exploration, grounding, question, [], "no indexed chunks"),
        *docrag.synthesis_triples(synthesis, exploration, "No documents found.", None, None, "no chunks retrieved"),
    ]


def test_empty_results_say_nothing_was_found_and_conform():
    trace = empty_traces()
    assert validate_trace(trace).conforms, validate_trace(trace).messages
    exploration = f"urn:trustgraph:docrag:{SID}/exploration"
    unmarked = [t for t in trace if not (t.s == iri(exploration) and t.o == TG.NothingFound)]
    assert_reported(validate_trace(unmarked), "Document RAG Exploration of no chunks says so")
    silent = [t for t in trace if not (t.s == iri(FOCUS) and t.p == RDFS.comment and "nothing" in t.o.value)]
    assert_reported(validate_trace(silent), f"<{FOCUS}>", "starting \"nothing found\"")
    selection = query.edge_selection_uri(SID, 0)
    chosen = [Triple(s=iri(FOCUS), p=TG.selectedEdge, o=iri(selection), g=RETRIEVAL_GRAPH),
              Triple(s=iri(selection), p=RDF.type, o=TG.EdgeSelection, g=RETRIEVAL_GRAPH),
              Triple(s=iri(selection), p=TG.edge, o=quoted(FACT.s, FACT.p, FACT.o), g=RETRIEVAL_GRAPH)]
    assert_reported(validate_trace([*trace, *chosen]), "tg:NothingFound step selects no edge")


def test_agent_steps_with_upstreams_thought_and_observation_entities_conform():
    from tracegraph.base.provenance import agent
    question, step, final = agent.question_uri("s1"), agent.iteration_uri("s1", 1), agent.conclusion_uri("s1")
    trace = [*agent.question_triples(question, "What is six times seven?", query.now()),
             *agent.analysis_triples(step, question, agent.Analysis(1, "Use the calculator.", "calculator",
                                                                    '{"expression": "6*7"}', "42")),
             *agent.reflection_triples(step, thought_saved=True, observation_saved=False),
             *agent.conclusion_triples(final, step, "42", agent.answer_document_uri("s1"), "final-answer")]
    assert validate_trace(trace).conforms, validate_trace(trace).messages
    thought, observation = agent.thought_uri(step), agent.observation_uri(step)
    assert {t.o for t in trace if t.s == iri(thought) and t.p == RDF.type} >= {TG.Thought, TG.Reflection}
    assert not [t for t in trace if t.s == iri(observation) and t.o == TG.Reflection]  # upstream would skip it
    assert [t.o for t in trace if t.s == iri(thought) and t.p == TG.document] == [iri(thought)]
    assert not [t for t in trace if t.s == iri(observation) and t.p == TG.document]
    assert_reported(validate_trace(replaced(trace, observation, PROV.wasDerivedFrom, iri(question))),
                    f"<{observation}>", "exactly one tg:Analysis")


def review_and_history() -> list[Triple]:
    """A pending review item, a decided one, and fact records as the history keeper writes them: one
    superseded by a newer document's, one retracted, and the documents' own times beside them."""
    from tracegraph.base.provenance.uris import review_item_uri
    from tracegraph.base.review.items import StoredItem, item_quads
    from tracegraph.base.temporal import records
    from tracegraph.base.temporal.keeper import document_quads
    from tracegraph.schemas.rdf import fact_key
    owned = Triple(s=iri(HELIOS), p=iri("https://trustgraph.ai/r/owned-by"), o=iri(CORVID))
    newer = Triple(s=iri(HELIOS), p=owned.p, o=iri("https://trustgraph.ai/e/orbis"))
    pending = StoredItem(uri=review_item_uri(fact_key(FACT), CHUNK), fact=FACT, confidence=0.25, document=DOC,
                         chunk=CHUNK, queued_at=STAMP, reason="inferred", subgraph=SUBGRAPH)
    decided = StoredItem(uri=review_item_uri(fact_key(owned), CHUNK), fact=owned, confidence=0.1, document=DOC,
                         chunk=CHUNK, queued_at=STAMP, status="approved", reviewer="bob", reviewed_at=STAMP)
    old = records.record_uri(owned, DOC, STAMP)
    new = records.record_uri(newer, "urn:doc:later", "2024-02-01T00:00:00Z")
    return [*item_quads(pending), *item_quads(decided),
            *records.record_quads(old, owned, DOC, STAMP, "2024-01-01T00:00:00Z", confidence=0.1),
            *records.supersession(old, "2024-02-01T00:00:00Z", new, "2024-02-01T00:00:00Z"),
            *records.record_quads(new, newer, "urn:doc:later", "2024-02-01T00:00:00Z", "2024-02-01T00:00:00Z"),
            records.retraction(new, "2024-03-01T00:00:00Z"),
            *document_quads(DOC, STAMP, "2024-01-01T00:00:00Z")]


def test_review_items_and_fact_records_conform():
    report = validate_trace(review_and_history())
    assert report.conforms, report.messages


def _record_and_item(triples: list[Triple]) -> tuple[str, str]:
    record = next(t.s.iri for t in triples if t.p == TG.validUntil)
    item = next(t.s.iri for t in triples if t.p == TG.reviewStatus and t.o == literal("approved"))
    return record, item


def test_a_record_without_valid_from_is_reported():
    triples = review_and_history()
    record, _ = _record_and_item(triples)
    report = validate_trace(without(triples, record, TG.validFrom))
    assert_reported(report, f"<{record}>", "tg:validFrom", "exactly one tg:validFrom")
    assert len(report.messages) == 1


def test_a_superseded_record_without_its_time_is_reported():
    triples = review_and_history()
    record, _ = _record_and_item(triples)
    assert_reported(validate_trace(without(triples, record, TG.supersededAt)), f"<{record}>", "tg:supersededAt")


def test_a_record_given_an_undated_validity_is_reported():
    triples = review_and_history()
    record, _ = _record_and_item(triples)
    report = validate_trace([*without(triples, record, TG.validFrom),
                             Triple(s=iri(record), p=TG.validFrom, o=literal("2024-01-01"), g="urn:graph:history")])
    assert_reported(report, f"<{record}>", "tg:validFrom", "xsd:dateTime")


def test_a_review_item_with_an_unknown_status_is_reported():
    from tracegraph.base.stores.protocol import REVIEW_GRAPH
    triples = review_and_history()
    _, item = _record_and_item(triples)
    report = validate_trace([*without(triples, item, TG.reviewStatus),
                             Triple(s=iri(item), p=TG.reviewStatus, o=literal("maybe"), g=REVIEW_GRAPH)])
    assert_reported(report, f"<{item}>", "tg:reviewStatus", "pending, approved or rejected", '"maybe"')


def test_a_decided_review_item_says_who_and_when():
    triples = review_and_history()
    _, item = _record_and_item(triples)
    report = validate_trace(without(without(triples, item, TG.reviewedAt), item, PROV.wasAttributedTo))
    assert_reported(report, f"<{item}>", "tg:reviewedAt", "when it was decided")
    assert_reported(report, f"<{item}>", "prov:wasAttributedTo", "who decided")


def test_a_review_item_confidence_outside_0_to_1_is_reported():
    from tracegraph.base.provenance.vocab import XSD
    from tracegraph.base.stores.protocol import REVIEW_GRAPH
    triples = review_and_history()
    _, item = _record_and_item(triples)
    report = validate_trace([*without(triples, item, TG.extractionConfidence),
                             Triple(s=iri(item), p=TG.extractionConfidence, o=literal("1.5", XSD.decimal.iri),
                                    g=REVIEW_GRAPH)])
    assert_reported(report, f"<{item}>", "tg:extractionConfidence", "from 0 to 1")


# -- extraction: subgraphs on line spans, phrases, entity kinds ----------------------------------------

LINES_SUBGRAPH = "https://trustgraph.ai/subgraph/lines-12-14"
STATEMENT = "urn:trustgraph:statement:test"


def placed() -> list[Triple]:
    """The valid trace, with a second subgraph of the chunk placed on lines 12–14 whose fact keeps its phrase,
    and the fact's entities typed."""
    return [*valid(),
            *extraction.subgraph_triples(LINES_SUBGRAPH, CHUNK, [FACT], component=COMPONENT, timestamp=STAMP,
                                         extractor="offline", lines=(12, 14)),
            *extraction.phrase_triples(STATEMENT, LINES_SUBGRAPH, FACT, "relies on"),
            Triple(s=iri(HELIOS), p=RDF.type, o=TG.Service), Triple(s=iri(CORVID), p=RDF.type, o=TG.Datastore)]


def test_placed_subgraphs_phrases_and_entity_kinds_conform():
    report = validate_trace(placed())
    assert report.conforms, report.messages


def test_a_line_span_running_backwards_or_half_given_is_reported():
    backwards = [t for t in placed() if not (t.s == iri(LINES_SUBGRAPH) and t.p == TG.lastLine)]
    backwards.append(Triple(s=iri(LINES_SUBGRAPH), p=TG.lastLine, o=literal(3), g=SOURCE_GRAPH))
    assert_reported(validate_trace(backwards), f"<{LINES_SUBGRAPH}>", "tg:firstLine", "no greater than its tg:lastLine")
    half = [t for t in placed() if not (t.s == iri(LINES_SUBGRAPH) and t.p == TG.lastLine)]
    assert_reported(validate_trace(half), f"<{LINES_SUBGRAPH}>", "also has a tg:lastLine")


def test_a_phrase_without_its_subgraph_or_with_two_phrases_is_reported():
    orphan = [t for t in placed() if not (t.s == iri(STATEMENT) and t.p == PROV.wasDerivedFrom)]
    assert_reported(validate_trace(orphan), f"<{STATEMENT}>", "exactly one tg:Subgraph")
    twice = [*placed(), Triple(s=iri(STATEMENT), p=TG.phrase, o=literal("depends upon"), g=SOURCE_GRAPH)]
    assert_reported(validate_trace(twice), f"<{STATEMENT}>", "exactly one non-empty tg:phrase")


def test_an_entity_kind_on_something_that_is_no_extracted_entity_is_reported():
    typed = [*placed(), Triple(s=iri(CHUNK), p=RDF.type, o=TG.Service)]
    assert_reported(validate_trace(typed), f"<{CHUNK}>", "an extracted entity")
