"""Extraction confidence: each offline rule's strength, the LLM's rating checked against the chunk,
and kg-extract sorting facts into the graph or the review queue by the flow's review-threshold
(a real Flow on the in-process bus, the message read back from its topic)."""

from __future__ import annotations

import contextlib
import json

import pytest

from tracegraph.base.bus import codec
from tracegraph.base.bus.inproc import InprocBackend
from tracegraph.base.bus.topic import Topic
from tracegraph.base.flow import Flow
from tracegraph.base.provenance.uris import entity_uri, relation_uri
from tracegraph.base.provenance.vocab import RDFS, SKOS, TG
from tracegraph.base.settings import RuntimeSettings
from tracegraph.base.extraction import clauses, reader
from tracegraph.base.extraction.reader import extract_text
from tracegraph.flow.kg_extract import llm
from tracegraph.base.extraction.facts import Confidence, Extraction, Relation, rated_facts, strongest, triage
from tracegraph.flow.kg_extract.processor import KnowledgeExtractor
from tracegraph.schemas.ingest import EntityContexts, Metadata, TextChunk, Triples
from tracegraph.schemas.rdf import Triple, fact_key, iri, literal

from support.ingest import CORPUS


def strength(found: Extraction, subject: str, predicate: str, obj: str) -> float:
    [relation] = [r for r in found.relations if r == Relation(subject, predicate, obj)]
    return relation.confidence.value


def extract(text: str, title: str = "") -> Extraction:
    return extract_text(text, title, markdown=True)


# -- offline: the rule's own strength -------------------------------------------------------------------

@pytest.mark.parametrize("text, relation, rule", [
    ("Helios Grid is a regional energy operator.", ("Helios Grid", "is a", "regional energy operator"),
     clauses.COPULAR_KIND),
    ("Helios Grid depends on Corvid Analytics.", ("Helios Grid", "depends on", "Corvid Analytics"),
     clauses.CANONICAL),
    ("Corvid Analytics was acquired by Tarn Holdings.", ("Corvid Analytics", "was acquired by", "Tarn Holdings"),
     clauses.PHRASAL),
    ("Ledger is on version 4.2.", ("Ledger", "version", "4.2"), clauses.VALUE),
    ("# Ledger\n\nOwner: Billing squad\n", ("Ledger", "is owned by", "Billing squad"), reader.FIELD),
    ("# Billing\n\n## Dependencies\n\n- Ledger\n", ("Billing", "depends on", "Ledger"), reader.LISTED),
    ("```mermaid\ngraph TD\n  billing --> ledger\n```\n", ("billing", "calls", "ledger"), reader.DIAGRAM),
])
def test_each_offline_rule_gives_its_facts_its_strength(text, relation, rule):
    found = extract(text)
    value = next(r for r in found.relations if (r.subject, r.predicate, r.object) == relation).confidence.value
    assert value == rule.value


def test_structure_and_canonical_verbs_rank_above_phrases_and_every_reason_names_its_rule():
    ranked = [reader.FIELD, clauses.COPULAR_KIND, clauses.CANONICAL, clauses.PHRASAL]
    assert [r.value for r in ranked] == sorted((r.value for r in ranked), reverse=True)
    assert all(r.reason.startswith(("offline parse: ", "offline structure: ")) for r in
               [*ranked, clauses.VALUE, reader.LISTED, reader.DIAGRAM, reader.ALIASED])


def test_a_hedged_clause_is_weaker_than_a_plain_one():
    plain = extract("Billing calls Ledger.")
    hedged = extract("Billing could call Ledger.")
    assert strength(hedged, "Billing", "calls", "Ledger") == pytest.approx(
        strength(plain, "Billing", "calls", "Ledger") * clauses.HEDGED)


def test_a_copular_sentence_defines_its_subject_and_other_sentences_give_context_only():
    copular = extract("Helios Grid is a regional energy operator.")
    assert copular.definitions["Helios Grid"] == "a regional energy operator"  # the phrase, not the sentence
    plain = extract_text("The play draws on hundreds of interviews. It has three acts.", "The Laramie Project",
                         markdown=False)
    assert plain.definitions["The Laramie Project"] == ""  # no whole sentence becomes a definition
    assert plain.contexts["The Laramie Project"] == "The play draws on hundreds of interviews."


def test_the_default_threshold_queues_nothing_the_offline_extractor_writes():
    for path in sorted(CORPUS.glob("*.md")):
        sorted_facts = triage(rated_facts(extract_text(path.read_text(), path.stem, path=path.name)), 0.3)
        assert sorted_facts.queued == [] and sorted_facts.accepted, path.name


def test_a_fact_found_twice_keeps_its_stronger_finding():
    weak = Relation("A", "p", "B", Confidence(0.4, "weak"))
    strong = Relation("A", "p", "B", Confidence(0.8, "strong"))
    assert [r.confidence.value for r in strongest([weak, Relation("C", "q", "D"), strong])] == [0.8, 1.0]
    assert list(rated_facts(Extraction({}, [weak, strong])).values()) == [strong.confidence]


# -- triage ---------------------------------------------------------------------------------------------

def fact(name: str) -> Triple:
    return Triple(s=iri(entity_uri("A")), p=iri(relation_uri("p")), o=iri(entity_uri(name)))


def test_triage_accepts_at_the_threshold_and_explains_only_the_queued():
    rated = {fact("at"): Confidence(0.1 + 0.2, "at the threshold"), fact("low"): Confidence(0.2, "low one"),
             fact("high"): Confidence(0.9, "high one")}
    split = triage(rated, 0.3)
    assert split.accepted == [fact("at"), fact("high")]  # 0.30000000000000004 is rounded to 0.3 first
    assert split.queued == [fact("low")] and split.reasons == {fact_key(fact("low")): "low one"}
    assert split.confidence == {fact_key(fact("at")): 0.3, fact_key(fact("low")): 0.2, fact_key(fact("high")): 0.9}
    split = triage(rated, 0.5)
    assert split.queued == [fact("at"), fact("low")]
    assert split.reasons == {fact_key(fact("at")): "at the threshold", fact_key(fact("low")): "low one"}


# -- LLM: the model's rating, checked against the chunk -----------------------------------------------

TEXT = "Helios Grid depends on Corvid Analytics. Corvid Analytics builds Skyline."


def reply(*relationships: dict, entities: list[dict] | None = None) -> str:
    return json.dumps({"entities": entities or [], "relationships": list(relationships)})


def test_the_model_is_asked_for_a_rating_and_an_unrated_fact_gets_the_default():
    assert '"confidence": number' in llm.SYSTEM
    found = llm.checked(llm.parse(reply({"subject": "Helios Grid", "predicate": "depends on",
                                         "object": "Corvid Analytics"})), TEXT)
    assert found.relations[0].confidence == Confidence(0.7, "model gave no rating (0.7 assumed)")


def test_a_name_not_in_the_text_falls_well_below_the_threshold_and_says_why():
    found = llm.checked(llm.parse(reply(
        {"subject": "Helios Grid", "predicate": "depends on", "object": "Corvid Analytics", "confidence": 0.9},
        {"subject": "Helios Grid", "predicate": "orbits", "object": "Zorbex", "confidence": 0.9},
        {"subject": "Quux", "predicate": "orbits", "object": "Zorbex"})), TEXT)
    good, one, both = (r.confidence for r in found.relations)
    assert good == Confidence(0.9, "model rated 0.9")
    assert one.value == pytest.approx(0.27) and one.reason == "object 'Zorbex' not in the text; model rated 0.9"
    assert both.value == pytest.approx(0.7 * 0.3 * 0.3)
    assert both.reason == ("subject 'Quux' not in the text; object 'Zorbex' not in the text; "
                           "model gave no rating (0.7 assumed)")
    assert triage(rated_facts(found), 0.3).queued == [
        Triple(s=iri(entity_uri("Helios Grid")), p=iri(relation_uri("orbits")), o=iri(entity_uri("Zorbex"))),
        Triple(s=iri(entity_uri("Quux")), p=iri(relation_uri("orbits")), o=iri(entity_uri("Zorbex")))]


def test_names_match_the_text_whatever_the_case_accents_and_punctuation_but_only_as_whole_words():
    text = "HÉLIOS grid’s data centre uses Corvid-Analytics. Gridlock followed."
    found = llm.checked(llm.parse(reply(
        {"subject": "Helios Grid", "predicate": "uses", "object": "Corvid Analytics", "confidence": 0.8},
        {"subject": "Grid", "predicate": "caused", "object": "Gridlock", "confidence": 0.8},
        {"subject": "Helios", "predicate": "caused", "object": "Grid lock", "confidence": 0.8})), text)
    assert [r.confidence.value for r in found.relations] == [0.8, 0.8, pytest.approx(0.24)]


def test_a_predicate_that_is_no_short_phrase_is_penalised():
    found = llm.checked(llm.parse(reply(
        {"subject": "Helios Grid", "predicate": "co-depends on", "object": "Corvid Analytics", "confidence": 1},
        {"subject": "Helios Grid", "predicate": "depends_on (2021)", "object": "Corvid Analytics", "confidence": 1},
        {"subject": "Helios Grid", "predicate": "is said by many to depend on", "object": "Corvid Analytics",
         "confidence": 1})), TEXT)
    rated = [r.confidence for r in found.relations]
    assert rated[0].value == 1 and rated[1].value == rated[2].value == pytest.approx(llm.ODD_PREDICATE)
    assert rated[1].reason == "predicate 'depends_on (2021)' is not a short phrase; model rated 1"


def test_a_definition_of_an_entity_the_text_never_names_is_queued():
    found = llm.checked(llm.parse(reply(entities=[{"name": "Helios Grid", "definition": "An energy operator."},
                                                  {"name": "Zorbex", "definition": "A moon."},
                                                  {"name": "Skyline", "definition": ""}])), TEXT)
    assert found.definition_confidence["Helios Grid"].value == 0.7
    assert found.definition_confidence["Zorbex"].value == pytest.approx(0.21)
    assert found.definition_confidence["Zorbex"].reason.startswith("entity 'Zorbex' not in the text; ")
    assert "Skyline" not in found.definition_confidence  # no definition, no fact to rate


async def test_a_rating_out_of_range_is_sent_back_like_any_malformed_reply():
    answers = iter([reply({"subject": "Helios Grid", "predicate": "depends on", "object": "Corvid Analytics",
                           "confidence": 85}),
                    reply({"subject": "Helios Grid", "predicate": "depends on", "object": "Nowhere Corp",
                           "confidence": 0.85})])
    prompts = []

    async def ask(system: str, prompt: str) -> str:
        prompts.append(prompt)
        return next(answers)

    found = await llm.extract(TEXT, ask)
    assert "previous answer was invalid" in prompts[1]
    assert found.relations[0].confidence.value == pytest.approx(0.85 * 0.3)  # checked against the chunk


# -- kg-extract: the flow's threshold decides ------------------------------------------------------------

TOPICS = {"input": "persistent://tg/flow/chunk-load:t", "triples": "persistent://tg/flow/triples-store:t",
          "entity-contexts": "persistent://tg/flow/entity-contexts:t",
          "text-completion": {"request": "non-persistent://tg/request/text-completion:t",
                              "response": "non-persistent://tg/response/text-completion:t"},
          "triples-query": {"request": "non-persistent://tg/request/triples-query:t",
                            "response": "non-persistent://tg/response/triples-query:t"}}
CHUNK = TextChunk(metadata=Metadata(id="urn:chunk:1", root="doc-1"), document="doc-1", index=1,
                  text="Helios Grid is a regional energy operator. Helios Grid depends on Corvid Analytics.")
DEPENDS = Triple(s=iri(entity_uri("Helios Grid")), p=iri(relation_uri("depends-on")),
                 o=iri(entity_uri("Corvid Analytics")))


@contextlib.asynccontextmanager
async def extractor_in_flow(parameters: dict[str, str]):
    """kg-extract (offline) bound to flow `t` with these parameters; yields (extract, messages sent)."""
    bus = InprocBackend()
    extractor = KnowledgeExtractor(bus, RuntimeSettings(extractor="offline"))
    flow = Flow(extractor, "t", TOPICS, parameters)
    try:
        async with (bus.subscribe(Topic.parse(TOPICS["triples"]), "test", auto_ack=True) as triples,
                    bus.subscribe(Topic.parse(TOPICS["entity-contexts"]), "test", auto_ack=True) as contexts):
            await flow.start()

            async def extract(chunk: TextChunk) -> tuple[Triples, EntityContexts]:
                await extractor.extract(chunk, flow)
                sent = await anext(triples), await anext(contexts)
                return (codec.decode(sent[0].body, sent[0].properties, Triples),
                        codec.decode(sent[1].body, sent[1].properties, EntityContexts))
            yield extract
    finally:
        await flow.stop()
        await bus.aclose()


async def test_facts_below_the_flows_threshold_go_to_review_with_their_reasons():
    async with extractor_in_flow({"review-threshold": "0.86"}) as extract_chunk:
        message, contexts = await extract_chunk(CHUNK)
    assert message.review == [DEPENDS]
    assert message.reasons == {fact_key(DEPENDS): clauses.CANONICAL.reason}
    assert DEPENDS not in message.triples
    contained = {t.o.triple for t in message.triples if t.p == TG.contains}
    assert DEPENDS not in contained and len(contained) == 2  # the definition and "is a" stay
    assert set(message.confidence.values()) == {0.9, clauses.CANONICAL.value} and len(message.confidence) == 3
    labelled = {t.s.iri for t in message.triples if t.p == RDFS.label}
    assert {entity_uri("Corvid Analytics"), relation_uri("depends on")} <= labelled  # named, though queued
    assert {c.label for c in contexts.entities} == {"Helios Grid", "Corvid Analytics", "regional energy operator"}


async def test_the_default_threshold_queues_no_offline_fact_and_reprocessing_gives_the_same_message():
    async with extractor_in_flow({}) as extract_chunk:
        first, _ = await extract_chunk(CHUNK)
        again, _ = await extract_chunk(CHUNK)
    assert first.review == [] and first.reasons == {} and DEPENDS in first.triples
    assert first.confidence[fact_key(DEPENDS)] == clauses.CANONICAL.value
    assert codec.encode(first)[0] == codec.encode(again)[0]
