"""Offline extraction, LLM reply parsing, and how findings become facts with deterministic IRIs."""

import pytest

from tracegraph.base.provenance.uris import entity_uri, relation_uri, slug
from tracegraph.base.provenance.vocab import RDFS, SKOS
from tracegraph.base.extraction.reader import extract_text
from tracegraph.flow.kg_extract import llm
from tracegraph.base.extraction.facts import Extraction, Relation, mentioned, mentions, to_triples

TEXT = ("Helios Grid is a regional energy operator that runs the network of Northern Vale. "
        "Helios Grid depends on Corvid Analytics for load forecasting. "
        "Corvid Analytics was acquired by Tarn Holdings in 2021. Dr. Ada Kern leads the Corvid Analytics team.")


def test_offline_finds_relations_and_definitions():
    found = extract_text(TEXT, markdown=False)
    assert Relation("Helios Grid", "depends on", "Corvid Analytics") in found.relations
    assert Relation("Corvid Analytics", "was acquired by", "Tarn Holdings") in found.relations
    assert Relation("Helios Grid", "is a", "regional energy operator") in found.relations
    assert found.definitions["Helios Grid"] == "a regional energy operator that runs the network of Northern Vale"
    assert Relation("Corvid Analytics team", "is led by", "Ada Kern") in found.relations  # "Dr." ends no sentence


def test_offline_ignores_sentence_initial_common_words():
    found = extract_text("The weather was fine. It rained later.", markdown=False)
    assert found.relations == [] and "The" not in found.definitions and "It" not in found.definitions


def test_facts_are_relations_and_definitions_with_labels_beside_them():
    extraction = Extraction({"Acme Corp": "Acme Corp is a firm.", "Lonely": ""},
                            [Relation("Acme Corp", "acquired", "Widget Inc")])
    facts, labels = to_triples(extraction)
    acme, widget = entity_uri("Acme Corp"), entity_uri("Widget Inc")
    assert {(t.s.iri, t.p.iri) for t in facts} == {(acme, SKOS.definition.iri), (acme, relation_uri("acquired"))}
    lonely = entity_uri("Lonely")  # named, but states nothing: a label and a mention, never a fact
    assert {t.s.iri for t in labels if t.p == RDFS.label} == {acme, widget, lonely, relation_uri("acquired")}
    assert mentioned(extraction) == ["Acme Corp", "Widget Inc", "Lonely"]
    assert mentions(extraction) == [acme, lonely, widget]


def test_iris_are_deterministic_from_labels():
    assert entity_uri("Acme Corp.") == entity_uri(" acme  corp ") == "https://trustgraph.ai/e/acme-corp"
    assert slug("Ünïcode Café") == "unicode-cafe"


def test_llm_reply_is_validated_and_fences_tolerated():
    reply = '```json\n{"entities": [{"name": "Acme", "definition": "A firm."}], ' \
            '"relationships": [{"subject": "Acme", "predicate": "Owns", "object": "Widget"}]}\n```'
    found = llm.parse(reply)
    assert found.definitions == {"Acme": "A firm."}
    assert found.relations == [Relation("Acme", "owns", "Widget")]


async def test_llm_is_asked_again_with_the_problem_then_gives_up():
    prompts = []

    async def garbage(system, prompt):
        prompts.append(prompt)
        return "sorry, I cannot do JSON"

    with pytest.raises(llm.ExtractionFailed, match="no valid JSON after 3 attempts"):
        await llm.extract("text", garbage)
    assert len(prompts) == 3 and "previous answer was invalid" in prompts[1]


async def test_llm_recovers_when_a_retry_is_valid():
    replies = iter(['{"entities": [{"name": 5}]}', '{"entities": [], "relationships": []}'])

    async def ask(system, prompt):
        return next(replies)

    assert (await llm.extract("text", ask)).relations == []
