"""Ownership placed in time: the judgement over dated claims (which owner is current, which side of a
graph–CODEOWNERS disagreement is newer, what is history), and the whole ownership answer over a store
whose history keeper saw a 2024 review, the 2025 review that replaced its owner and lead, and an
undated CODEOWNERS file still naming the 2024 owners."""

from __future__ import annotations

import doctest

import pytest

import tracegraph.base.architecture.owner_history as owner_history
from tracegraph.base.architecture import codeowners
from tracegraph.base.architecture.code_paths import code_paths
from tracegraph.base.architecture.graph import resolve
from tracegraph.base.architecture.owner_history import Claim, DocumentDate, judge, listing_order, standing
from tracegraph.base.architecture.ownership import ownership
from tracegraph.base.architecture.rules import CodeOwnersShelf
from tracegraph.base.architecture.triples import code_path_facts, codeowners_facts, with_provenance
from tracegraph.base.provenance.extraction import Component, chunk_triples, document_triples, subgraph_triples
from tracegraph.base.provenance.uris import chunk_uri, entity_uri, relation_uri, subgraph_uri
from tracegraph.base.provenance.vocab import RDFS
from tracegraph.base.stores.oxigraph import OxigraphTripleStore
from tracegraph.base.stores.protocol import CollectionRef
from tracegraph.base.temporal.keeper import HistoryKeeper
from tracegraph.base.temporal.records import Record
from tracegraph.flow.triples.temporal import store_rows
from tracegraph.schemas.architecture import Owner, Source
from tracegraph.schemas.ingest import Metadata
from tracegraph.schemas.rdf import Triple, iri, literal

E = "https://trustgraph.ai/e/"
GRID, GUILD, TOMAS, ADA = E + "grid-analytics", E + "forecasting-guild", E + "tomas-brandt", E + "ada-kern"
NAMES = {GRID: "Grid Analytics", GUILD: "Forecasting Guild", TOMAS: "Tomas Brandt", ADA: "Ada Kern"}
REVIEW_2024 = Source(document="urn:doc:r24", title="review-2024.md", line=5, date="2024-03-04", kind="graph")
REVIEW_2025 = Source(document="urn:doc:r25", title="review-2025.md", line=5, date="2025-09-15", kind="graph")
RULES = Source(document="urn:doc:co", title="CODEOWNERS", line=9, added="2026-11-27", kind="codeowners")


def test_doctests():
    result = doctest.testmod(owner_history)
    assert result.attempted > 0 and result.failed == 0


def replaced(owner: str) -> Claim:
    return Claim(owner, "graph", REVIEW_2024.model_copy(update={"superseded_by": REVIEW_2025}), holds=False,
                 since="2024-03-04", until="2025-09-15")


def sample_claims(rules: Source = RULES) -> list[Claim]:
    """The sample corpus: the 2025 review names Grid Analytics and Tomas Brandt; the 2024 review's Forecasting
    Guild and Ada Kern were replaced on 2025-09-15, and CODEOWNERS still names them."""
    return [Claim(GRID, "graph", REVIEW_2025, since="2025-09-15"), Claim(TOMAS, "graph", REVIEW_2025, since="2025-09-15"),
            replaced(GUILD), replaced(ADA),
            Claim(GUILD, "codeowners", rules, since=rules.date), Claim(ADA, "codeowners", rules, since=rules.date)]


def test_codeowners_naming_replaced_owners_is_the_older_side():
    verdict = judge(sample_claims(), NAMES)
    assert verdict.current == {GRID, TOMAS} and verdict.newer == "graph"
    assert verdict.reason == ("The graph is newer: CODEOWNERS (CODEOWNERS line 9, undated, added 2026-11-27) still "
                              "names Ada Kern, Forecasting Guild, whom review-2025.md replaced on 2025-09-15.")


def test_codeowners_dated_after_the_change_is_the_newer_side():
    verdict = judge(sample_claims(RULES.model_copy(update={"date": "2026-01-10"})), NAMES)
    assert verdict.current == {GUILD, ADA} and verdict.newer == "codeowners"
    assert verdict.reason.startswith("CODEOWNERS is newer: CODEOWNERS line 9 is dated 2026-01-10; the graph's "
                                     "newest source, review-2025.md line 5, is dated 2025-09-15")


def test_dates_alone_decide_without_a_replacement():
    rules = RULES.model_copy(update={"date": "2023-05-01"})
    claims = [Claim(GRID, "graph", REVIEW_2025, since="2025-09-15"), Claim(GUILD, "codeowners", rules, since=rules.date)]
    verdict = judge(claims, NAMES)
    assert (verdict.current, verdict.newer) == ({GRID}, "graph")
    assert "is dated 2023-05-01" in verdict.reason


def test_an_undated_side_leaves_both_current_and_says_why():
    claims = [Claim(GRID, "graph", REVIEW_2025, since="2025-09-15"), Claim(GUILD, "codeowners", RULES)]
    verdict = judge(claims, NAMES)
    assert (verdict.current, verdict.newer) == ({GRID, GUILD}, "unknown")
    assert verdict.reason == ("Which side is newer cannot be told: CODEOWNERS (CODEOWNERS line 9) carries no date of "
                              "its own (added 2026-11-27), and the graph's newest source, review-2025.md line 5, is "
                              "dated 2025-09-15.")


def test_agreement_has_no_newer_side():
    claims = [Claim(GRID, "graph", REVIEW_2025, since="2025-09-15"), Claim(GRID, "codeowners", RULES)]
    assert judge(claims, NAMES) == owner_history.Judgement(frozenset({GRID}))


def test_a_replaced_statement_is_marked_with_what_replaced_it():
    fact = Triple(s=iri(E + "skyline"), p=iri(relation_uri("is owned by")), o=iri(GUILD))
    later_fact = fact.model_copy(update={"o": iri(GRID)})
    old = Record(uri="urn:rec:1", fact=fact, document="urn:doc:r24", valid_from="2024-03-04T00:00:00Z",
                 valid_until="2025-09-15T00:00:00Z", superseded_by="urn:rec:2")
    new = Record(uri="urn:rec:2", fact=later_fact, document="urn:doc:r25", valid_from="2025-09-15T00:00:00Z")
    dates = {"urn:doc:r24": DocumentDate("2024-03-04", "2026-11-27"), "urn:doc:r25": DocumentDate("2025-09-15", "2026-11-27")}
    cited = {"<x>": []}
    bare = REVIEW_2024.model_copy(update={"date": ""})
    (claim,) = owner_history.graph_claims(GUILD, fact, [bare], [old], {"urn:rec:2": new}, cited, dates, current=False)
    assert (claim.holds, claim.since, claim.until) == (False, "2024-03-04", "2025-09-15")
    assert (claim.source.date, claim.source.added) == ("2024-03-04", "2026-11-27")
    assert (claim.source.superseded_by.document, claim.source.superseded_by.date) == ("urn:doc:r25", "2025-09-15")
    # As of a day before the change, the same record still held: not replaced yet.
    (then,) = owner_history.graph_claims(GUILD, fact, [bare], [old], {"urn:rec:2": new}, cited, dates,
                                         current=True, at="2025-01-01T00:00:00Z")
    assert (then.holds, then.until, then.source.superseded_by) == (True, "", None)
    # A document without a date of its own gives no "since": its valid-from is the day it was added.
    undated = {"urn:doc:r24": DocumentDate("", "2024-03-04")}
    (claim,) = owner_history.graph_claims(GUILD, fact, [bare], [old], {}, cited, undated, current=False)
    assert (claim.since, claim.source.date, claim.source.added) == ("", "", "2024-03-04")


def test_current_owners_come_first_and_history_after():
    claims = sample_claims()
    verdict = judge(claims, NAMES)
    owners = [Owner(entity=GUILD, label="Forecasting Guild", relations=["is owned by", "CODEOWNERS"],
                    sources=[c.source for c in claims if c.owner == GUILD]),
              Owner(entity=TOMAS, label="Tomas Brandt", relations=["is led by"], sources=[REVIEW_2025]),
              Owner(entity=ADA, label="Ada Kern", relations=["is led by", "CODEOWNERS"],
                    sources=[c.source for c in claims if c.owner == ADA]),
              Owner(entity=GRID, label="Grid Analytics", relations=["is owned by"], sources=[REVIEW_2025])]
    placed = sorted((standing(o, [c for c in claims if c.owner == o.entity], verdict) for o in owners),
                    key=listing_order)
    assert [(o.label, o.standing, o.since, o.until) for o in placed] == [
        ("Grid Analytics", "current", "2025-09-15", ""), ("Tomas Brandt", "current", "2025-09-15", ""),
        ("Forecasting Guild", "earlier", "2024-03-04", "2025-09-15"), ("Ada Kern", "earlier", "2024-03-04", "2025-09-15")]


def test_a_newer_dated_source_outranks_an_older_one():
    older = Owner(entity=GUILD, label="A team", relations=["is owned by"], sources=[REVIEW_2024])
    newer = Owner(entity=GRID, label="B team", relations=["is owned by"], sources=[REVIEW_2025])
    assert sorted([older, newer], key=listing_order) == [newer, older]


async def test_document_dates_tell_an_own_date_from_the_day_added():
    async def rows(query: str, limit: int):
        assert "urn:doc:r24" in query and "urn:doc:co" in query
        return [{"doc": iri("urn:doc:r24"), "from": literal("2024-03-04T00:00:00Z"), "rec": literal("2026-11-27T22:15:53Z")},
                {"doc": iri("urn:doc:co"), "from": literal("2026-11-27T22:15:51Z"), "rec": literal("2026-11-27T22:15:51Z")}]

    dates = await owner_history.document_dates(rows, ["urn:doc:r24", "urn:doc:co", "urn:doc:r24"])
    assert dates == {"urn:doc:r24": DocumentDate("2024-03-04", "2026-11-27"), "urn:doc:co": DocumentDate("", "2026-11-27")}
    assert await owner_history.document_dates(rows, []) == {}


# ---------------------------------------------------------------- the whole answer over a store with history

REF = CollectionRef("alice", "arch")
COMPONENT = Component("test", "1")
CODEOWNERS_TEXT = "*  @corvid/platform-team\n/services/skyline/  @corvid/forecasting-guild @ada-kern\n"


def review(document: str, title: str, facts: list[Triple], labels: dict[str, str]) -> list[Triple]:
    """A review as kg-extract states it: its facts in a subgraph of a chunk of the document."""
    chunk = chunk_uri(document, 1, 1000, 100)
    named = [Triple(s=iri(e), p=RDFS.label, o=literal(label)) for e, label in labels.items()]
    return [*document_triples(document, title=title, mime_type="text/markdown", date="2026-11-27T10:00:00Z"),
            *facts, *named,
            *chunk_triples(chunk, document, index=1, char_offset=0, char_length=10, chunk_size=1000,
                           chunk_overlap=100, component=COMPONENT, timestamp="2026-11-27T10:00:00Z"),
            *subgraph_triples(subgraph_uri(chunk, "offline"), chunk, facts, component=COMPONENT,
                              timestamp="2026-11-27T10:00:00Z", extractor="offline", lines=(5, 6))]


@pytest.fixture
async def rows(tmp_path):
    store = OxigraphTripleStore(tmp_path / "triples")
    keeper = HistoryKeeper(store)
    owned_by, led_by = relation_uri("is owned by"), relation_uri("is led by")
    keeper.functional = frozenset({owned_by, led_by})
    skyline = iri(entity_uri("Skyline"))

    async def admit(meta: Metadata, triples: list[Triple]) -> None:
        async with keeper.writing(REF):
            admission = await keeper.admit(REF, meta, triples)
            await admission.store(store, REF)

    def meta(document: str, date: str, time: str) -> Metadata:
        return Metadata(id=document, root=document, user="alice", collection="arch", time=time, date=date)

    labels = {entity_uri("Skyline"): "Skyline"}
    await admit(meta("urn:doc:r24", "2024-03-04T00:00:00Z", "2026-11-27T10:00:00Z"), review(
        "urn:doc:r24", "skyline-review-2024.md",
        [Triple(s=skyline, p=iri(owned_by), o=iri(GUILD)), Triple(s=skyline, p=iri(led_by), o=iri(ADA))],
        {**labels, GUILD: "Forecasting Guild", ADA: "Ada Kern"}))
    await admit(meta("urn:doc:r25", "2025-09-15T00:00:00Z", "2026-11-27T10:00:01Z"), review(
        "urn:doc:r25", "skyline-review-2025.md",
        [Triple(s=skyline, p=iri(owned_by), o=iri(GRID)), Triple(s=skyline, p=iri(led_by), o=iri(TOMAS))],
        {**labels, GRID: "Grid Analytics", TOMAS: "Tomas Brandt"}))
    parsed = codeowners.parse(CODEOWNERS_TEXT)
    lines = codeowners_facts("urn:doc:co", parsed)
    lines.update(code_path_facts(code_paths("Skyline's code lives in services/skyline/.")))
    await admit(meta("urn:doc:co", "", "2026-11-27T10:00:02Z"), [
        *document_triples("urn:doc:co", title="CODEOWNERS", mime_type="text/x-codeowners", date="2026-11-27T10:00:02Z"),
        *with_provenance("urn:doc:co", lines, timestamp="2026-11-27T10:00:02Z", extractor="offline")])
    yield store_rows(store, REF)
    await store.aclose()


async def test_the_answer_puts_the_current_owner_first_and_the_replaced_ones_in_history(rows):
    found = await ownership(rows, await resolve(rows, "Skyline"), CodeOwnersShelf(), ("alice", "arch"))
    response = found.response
    assert [(o.label, o.standing, o.since, o.until) for o in response.owners] == [
        ("Grid Analytics", "current", "2025-09-15", ""), ("Tomas Brandt", "current", "2025-09-15", ""),
        ("Forecasting Guild", "earlier", "2024-03-04", "2025-09-15"), ("Ada Kern", "earlier", "2024-03-04", "2025-09-15")]
    grid, _tomas, guild, _ada = response.owners
    assert [(s.title, s.date, s.superseded_by) for s in grid.sources] == [("skyline-review-2025.md", "2025-09-15", None)]
    stated, rule = guild.sources
    assert (stated.title, stated.date, stated.superseded_by.title, stated.superseded_by.date) == (
        "skyline-review-2024.md", "2024-03-04", "skyline-review-2025.md", "2025-09-15")
    assert (rule.kind, rule.line, rule.date, rule.added) == ("codeowners", 2, "", "2026-11-27")
    assert guild.origins == ["graph", "codeowners"] and guild.handles == ["@corvid/forecasting-guild"]
    assert response.codeowners[0].source.added == "2026-11-27"
    assert (response.agreement, response.newer) == ("disagree", "graph")
    assert response.discrepancy.endswith("The graph is newer: CODEOWNERS (CODEOWNERS line 2, undated, added "
                                         "2026-11-27) still names Ada Kern, Forecasting Guild, whom "
                                         "skyline-review-2025.md replaced on 2025-09-15.")
    assert {f.o.iri for f in found.edges} == {GRID, TOMAS} and {f.o.iri for f in found.replaced} == {GUILD, ADA}


async def test_as_of_a_day_before_the_change_the_replaced_owners_are_current(rows):
    """The as-of answer chooses the facts held then; the same composition then puts them first, undated by
    anything later, and CODEOWNERS (added after the date) is left out."""
    then = (await ownership(rows, await resolve(rows, "Skyline"), CodeOwnersShelf(), ("alice", "arch"),
                            as_of="2024-06-01T00:00:00Z")).response
    assert [(o.label, o.standing, o.since, o.until) for o in then.owners] == [
        ("Forecasting Guild", "current", "2024-03-04", ""), ("Ada Kern", "current", "2024-03-04", "")]
    assert all(s.superseded_by is None for o in then.owners for s in o.sources)
