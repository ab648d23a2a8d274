"""Grounding a question in a collection's entities whatever its case, through aliases, handles and "the X
service" phrasing, without common words matching by accident; and the names a collection does not know."""

from __future__ import annotations

import pytest

from tracegraph.base.provenance.uris import entity_uri, relation_uri
from tracegraph.base.provenance.vocab import RDF, RDFS, TG
from tracegraph.base.retrieval.grounding import asked_words, ground, question_phrases
from tracegraph.base.retrieval.local import LocalRetrievalTools
from tracegraph.base.retrieval.unknown_names import UnknownName, unknown_answer, unknown_names
from tracegraph.schemas.rdf import Triple, iri, literal

from support.graph_rag import REF, search_stores

LABELS = ["Billing", "Ledger", "LGR", "NATS", "Ana Ruiz", "Grid Analytics team", "Service", "Decision", "What",
          "record label", "frontend-proxy"]


def label(name: str) -> Triple:
    return Triple(s=iri(entity_uri(name)), p=RDFS.label, o=literal(name))


EXTRA = [*(label(n) for n in LABELS),
         Triple(s=iri(entity_uri("Ledger")), p=iri(relation_uri("is also known as")), o=iri(entity_uri("LGR"))),
         Triple(s=iri(entity_uri("Ledger")), p=RDF.type, o=TG.Service),
         Triple(s=iri(entity_uri("Ana Ruiz")), p=TG.contactHandle, o=literal("@aruiz")),
         Triple(s=iri(entity_uri("Billing")), p=iri(relation_uri("depends on")), o=iri(entity_uri("NATS")))]


@pytest.fixture
async def tools(tmp_path, embedder):
    async with search_stores(tmp_path, embedder) as (triples, vectors, keywords):
        await triples.add(REF, EXTRA)
        await keywords.apply(REF, added=EXTRA[-1:])
        yield LocalRetrievalTools(REF, triples, vectors, keywords, embedder)


async def named(tools, question: str) -> list[str]:
    return [m.label for m in (await ground(tools, question)).matches]


@pytest.mark.parametrize("question", ["Who owns Billing?", "who owns billing?", "WHO OWNS BILLING?",
                                      "who owns the billing service?", "Who owns the Billing Service?"])
async def test_a_name_is_found_in_any_case_and_as_the_extractor_reads_it(tools, question):
    assert await named(tools, question) == ["Billing"]


async def test_lower_case_names_match_labels_written_as_names(tools):
    assert await named(tools, "why did we move to nats?") == ["NATS"]
    assert await named(tools, "what does helios grid depend on?") == ["Helios Grid"]
    assert await named(tools, "who is on the grid analytics team?") == ["Grid Analytics team"]
    assert await named(tools, "who owns frontend-proxy?") == ["frontend-proxy"]


async def test_an_alias_leads_to_the_entity_it_names_and_a_handle_to_its_holder(tools):
    found = await ground(tools, "who owns lgr?")
    assert found.entities == [entity_uri("Ledger"), entity_uri("LGR")]
    assert found.names[0] == "Ledger" and "an alias: LGR" in found.notes()[0]
    found = await ground(tools, "what does @aruiz maintain?")
    assert found.names == ["Ana Ruiz"] and "its handle" in found.notes()[0]


async def test_common_words_never_match_a_label_by_accident(tools):
    # "Service", "Decision" and "What" are labels here (extraction noise), "record label" a plain noun.
    assert await named(tools, "what service made the decision?") == []
    assert await named(tools, "what is the record label?") == []


async def test_a_question_that_capitalises_its_names_keeps_plain_lower_case_words_out(tools):
    # "billing" is a lower-case word beside capitalised names; "nats" still matches NATS (more than a capital).
    assert await named(tools, "Does Helios Grid send billing data over nats?") == ["Helios Grid", "NATS"]


async def test_names_the_collection_lacks_are_unmatched_and_a_lower_case_question_gives_what_it_asks(tools):
    found = await ground(tools, "Who owns Quasar?")
    assert found.matches == () and found.unmatched == ("Quasar",)
    found = await ground(tools, "who owns quasar?")
    assert found.unmatched == () and found.asked == "quasar"
    assert (await ground(tools, "Does Helios Grid depend on Quasar?")).unmatched == ("Quasar",)


def test_phrases_and_asked_words():
    assert [p.text for p in question_phrases("who owns the billing service?")] == ["billing", "billing service"]
    assert asked_words("who is on the grid analytics team?") == "grid analytics team"
    assert asked_words("what does it depend on?") is None


async def test_an_unknown_name_is_told_apart_from_one_the_passages_or_facts_say(tools):
    unknown = await unknown_names(tools, ["Quasar", "Corvid Analytics", "nats"])
    assert [u.name for u in unknown] == ["Quasar"]  # an entity's synonym, and a word a fact says, are known
    assert len(unknown[0].nearest) == 3
    assert unknown_answer([UnknownName("Quasar", ("Skyline",))]) == \
        "No entity named Quasar in this collection; nearest: Skyline."
