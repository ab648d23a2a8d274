"""Ownership, dependencies and memory read from a real (on-disk oxigraph) store holding what the
extractors write: facts with their chunk provenance, CODEOWNERS rules with their lines, memory records."""

from __future__ import annotations

import doctest
import math
import re
from datetime import UTC, datetime

import pytest

import tracegraph.base.architecture.graph
import tracegraph.base.architecture.memory
import tracegraph.base.architecture.verbs
from tracegraph.base.architecture import codeowners
from tracegraph.base.architecture.code_paths import code_paths
from tracegraph.base.architecture.dependencies import dependencies
from tracegraph.base.architecture.graph import resolve
from tracegraph.base.architecture.memory import memory
from tracegraph.base.architecture.memory_docs import MemoryRecord
from tracegraph.base.architecture.ownership import ownership, path_ownership
from tracegraph.base.architecture.rules import CodeOwnersShelf
from tracegraph.base.architecture.triples import (
    code_path_facts, codeowners_facts, memory_facts, problem_triples, with_provenance,
)
from tracegraph.base.architecture.verbs import DEPENDENCY, verbs
from tracegraph.base.errors import UnknownEntity
from tracegraph.base.provenance.extraction import Component, chunk_triples, document_triples, subgraph_triples
from tracegraph.base.provenance.uris import chunk_uri, entity_uri, relation_uri, subgraph_uri
from tracegraph.base.provenance.vocab import RDFS, TG
from tracegraph.base.stores.oxigraph import OxigraphTripleStore
from tracegraph.base.stores.protocol import SOURCE_GRAPH, CollectionRef
from tracegraph.flow.triples.temporal import store_rows
from tracegraph.schemas.rdf import Triple, iri, literal

REF = CollectionRef("alice", "arch")
TIME = "2026-11-01T10:00:00Z"
COMPONENT = Component("test", "1")
CODEOWNERS_TEXT = """# owners of the monorepo
*                     @corvid/platform-team
/services/skyline/    @corvid/forecasting-guild @ada-kern
/services/storage-gateway/ @corvid/platform-team
/services/legacy/ corvid-billing
"""


@pytest.mark.parametrize("module", [tracegraph.base.architecture.graph, tracegraph.base.architecture.memory,
                                    tracegraph.base.architecture.verbs])
def test_doctests(module):
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0


NAMES: dict[str, str] = {}  # entity IRI → the name a fact was written with


def fact(s: str, p: str, o: str) -> Triple:
    NAMES.update({entity_uri(s): s, entity_uri(o): o})
    return Triple(s=iri(entity_uri(s)), p=iri(relation_uri(p)), o=iri(entity_uri(o)))


def stated(document: str, title: str, facts: list[Triple]) -> list[Triple]:
    """Facts as kg-extract states them: in a subgraph derived from a chunk of the document, labelled."""
    chunk = chunk_uri(document, 1, 1000, 100)
    labels = [Triple(s=t, p=RDFS.label, o=literal(NAMES.get(t.iri, t.iri))) for f in facts for t in (f.s, f.o)]
    return [*document_triples(document, title=title, mime_type="text/markdown", date=TIME), *facts, *labels,
            *chunk_triples(chunk, document, index=1, char_offset=0, char_length=10, chunk_size=1000, chunk_overlap=100,
                           component=COMPONENT, timestamp=TIME),
            *subgraph_triples(subgraph_uri(chunk, "offline"), chunk, facts, component=COMPONENT, timestamp=TIME,
                              extractor="offline")]


@pytest.fixture
async def rows(tmp_path):
    store = OxigraphTripleStore(tmp_path / "triples")
    parsed = codeowners.parse(CODEOWNERS_TEXT)
    owners_doc = "urn:doc:codeowners"
    written = [*document_triples(owners_doc, title="CODEOWNERS", mime_type="text/x-codeowners", date=TIME),
               *with_provenance(owners_doc, codeowners_facts(owners_doc, parsed), timestamp=TIME, extractor="offline"),
               *problem_triples(owners_doc, parsed.problems, timestamp=TIME)]
    adr = "urn:doc:adr-7"
    paths = code_paths("Skyline's code lives in services/skyline/.\nThe Storage Gateway's code lives in "
                       "services/storage-gateway/.")
    written += with_provenance(adr, code_path_facts(paths), timestamp=TIME, extractor="offline")
    written += stated("urn:doc:review", "Skyline review 2025", [
        fact("Skyline", "is owned by", "Grid Analytics team"), fact("Tomas Brandt", "leads", "Skyline"),
        fact("Storage Gateway", "is owned by", "Platform team")])
    written += stated(adr, "ADR 0007", [
        fact("Skyline", "depends on", "Demand Feed"), fact("Demand Feed", "calls", "Storage Gateway"),
        fact("Storage Gateway", "calls", "Skyline"), fact("Storage Gateway", "depends on", "Orbis Cloud"),
        fact("Skyline", "runs on", "Orbis Cloud"), fact("Orbis Cloud", "is used by", "Billing"),
        fact("Skyline", "mentioned with", "Helios Grid")])
    written += with_provenance(adr, memory_facts(adr, [
        MemoryRecord(kind="decision", title="ADR 0007: Skyline writes through the Storage Gateway",
                     text="Skyline writes its forecasts through the Storage Gateway.", line=1, author="Ada Kern",
                     date="2024-05-10", status="accepted", relations={"why": ("Skyline",)}),
        MemoryRecord(kind="decision", title="ADR 0012: Run Skyline in two regions",
                     text="Skyline runs in Port Sable and Eastmarch.", line=20, author="Tomas Brandt",
                     date="2025-10-02", status="accepted", relations={"why": ("Skyline",)}),
        MemoryRecord(kind="failure-pattern", title="Skyline forecast outage", text="A cooling failure stopped Skyline.",
                     line=40, author="Mei Tanaka", date="2024-06-20", relations={"affected": ("Skyline",),
                                                                                 "caused-by": ("Orbis Cloud",)}),
        MemoryRecord(kind="decision", title="ADR 0003: Skyline in one region", text="Skyline runs in Eastmarch.",
                     line=60, date="2023-01-01", status="superseded", relations={"why": ("Skyline",)}),
    ]), timestamp=TIME, extractor="offline")
    await store.add(REF, written)
    yield store_rows(store, REF)
    await store.aclose()


async def test_names_resolve_to_entities_and_an_unknown_one_is_named(rows):
    assert (await resolve(rows, "the Storage Gateway")).iri == entity_uri("Storage Gateway")
    assert (await resolve(rows, "skyline service")).iri == entity_uri("Skyline")
    assert (await resolve(rows, entity_uri("Skyline"))).label == "Skyline"
    with pytest.raises(UnknownEntity, match="no entity 'Checkout' in collection 'arch'"):
        await resolve(rows, "Checkout", "arch")


async def test_ownership_disagreement_returns_both_with_a_note(rows):
    found = await ownership(rows, await resolve(rows, "Skyline"), CodeOwnersShelf(), ("alice", "arch"))
    response = found.response
    origins = {o.label.lower(): o.origins for o in response.owners}
    assert origins["grid analytics team"] == ["graph"] and origins["tomas brandt"] == ["graph"], origins
    codeowners_only = [o for o in response.owners if o.origins == ["codeowners"]]
    assert sorted((o.label, h) for o in codeowners_only for h in o.handles) == [
        ("@ada-kern", "@ada-kern"), ("@corvid/forecasting-guild", "@corvid/forecasting-guild")]
    assert response.agreement == "disagree"
    assert "Grid Analytics team" in response.discrepancy and "CODEOWNERS (rule /services/skyline/, CODEOWNERS line 3)" in response.discrepancy
    (match,) = response.codeowners
    assert (match.path, match.path_origin, match.pattern, match.source.line) == (
        "services/skyline/", "graph", "/services/skyline/", 3)
    review = next(o for o in response.owners if o.label == "Grid Analytics team")
    assert [(s.document, s.title) for s in review.sources] == [("urn:doc:review", "Skyline review 2025")]
    assert {(f.p.iri.rsplit("/", 1)[-1]) for f in found.edges} == {"is-owned-by", "leads"}


async def test_ownership_agreement_merges_a_team_seen_in_both(rows):
    response = (await ownership(rows, await resolve(rows, "Storage Gateway"), CodeOwnersShelf(),
                                ("alice", "arch"))).response
    assert response.agreement == "agree" and response.discrepancy == ""
    (team,) = response.owners
    assert (team.label, team.origins, team.handles, team.kind) == (
        "Platform team", ["graph", "codeowners"], ["@corvid/platform-team"], "team")
    assert {s.kind for s in team.sources} == {"graph", "codeowners"}


async def test_a_repository_path_is_owned_by_the_rule_deciding_it(rows):
    file = await path_ownership(rows, "services/skyline/models/train.py", CodeOwnersShelf(), ("alice", "arch"))
    assert [(m.pattern, m.source.line) for m in file.codeowners] == [("/services/skyline/", 3)]
    assert sorted((o.label, o.kind) for o in file.owners) == [("@ada-kern", "person"), ("@corvid/forecasting-guild", "team")]
    assert file.agreement == "codeowners-only"
    elsewhere = await path_ownership(rows, "/docs/", CodeOwnersShelf(), ("alice", "arch"))
    assert [m.pattern for m in elsewhere.codeowners] == ["*"] and elsewhere.owners[0].handles == ["@corvid/platform-team"]


async def test_a_malformed_codeowners_line_is_recorded_not_dropped(rows):
    errors = await rows(f"SELECT ?e WHERE {{ GRAPH <{SOURCE_GRAPH}> {{ ?sg <{TG.extractionError.iri}> ?e }} }}", 10)
    assert [r["e"].value for r in errors] == ["line 5: " + codeowners.parse(CODEOWNERS_TEXT).problems[0].reason]


async def test_dependency_trees_report_cycles_and_read_both_voices(rows):
    skyline = await resolve(rows, "Skyline")
    tree = await dependencies(rows, skyline, depth=3, direction="out", verbs=verbs())
    pairs = [(e.source_label, e.predicate_label, e.target_label, e.depth) for e in tree.edges]
    assert ("Skyline", "depends on", "Demand Feed", 1) in pairs and ("Storage Gateway", "calls", "Skyline", 3) in pairs
    assert ("Skyline", "mentioned with", "Helios Grid", 1) not in pairs
    assert tree.cycles == [["Skyline", "Demand Feed", "Storage Gateway", "Skyline"]]
    looped = tree.root.children[0].children[0].children
    assert [(n.label, n.cycle, n.children) for n in looped if n.label == "Skyline"] == [("Skyline", True, [])]
    assert all(e.sources and e.sources[0].title == "ADR 0007" for e in tree.edges)
    assert all(e.weight == 1.0 for e in tree.edges)  # no history recorded in this store

    orbis = await resolve(rows, "Orbis Cloud")
    users = await dependencies(rows, orbis, depth=1, direction="in", verbs=verbs())
    # "Orbis Cloud is used by Billing": Billing depends on the Orbis Cloud, read from the passive voice.
    assert {e.target_label for e in users.edges} == {"Skyline", "Storage Gateway", "Billing"}
    assert {e.target_label for e in (await dependencies(rows, orbis, depth=1, direction="in",
                                                        verbs=verbs(["uses"]))).edges} == {"Billing"}
    assert {e.target_label for e in (await dependencies(rows, orbis, depth=1, direction="in",
                                                        verbs=verbs(["Runs  On"]))).edges} == {"Skyline"}
    capped = await dependencies(rows, skyline, depth=3, direction="out", verbs=verbs(), max_edges=3)
    assert capped.truncated and [e.depth for e in capped.edges] == [1, 2, 1]  # nearest levels first, then cut
    only_calls = await dependencies(rows, skyline, depth=3, direction="out", verbs=verbs(["calls"]))
    assert only_calls.edges == [] and only_calls.predicates == ["calls"]
    assert verbs().active == DEPENDENCY


def bag_of_words(texts):
    """A stand-in embedding: word counts over a fixed vocabulary (cosine = shared words)."""
    vocabulary = sorted({w for t in texts for w in re.findall(r"[a-z]+", t.lower())})
    out = []
    for t in texts:
        words = re.findall(r"[a-z]+", t.lower())
        vector = [float(words.count(v)) for v in vocabulary]
        norm = math.sqrt(sum(x * x for x in vector)) or 1.0
        out.append([x / norm for x in vector])
    return out


def top_recency(found) -> float:
    return max(i.recency for i in found.items)


async def embed(texts):
    return bag_of_words(list(texts))


async def test_memory_ranks_by_relevance_and_recency_with_provenance(rows):
    skyline = await resolve(rows, "Skyline")
    today = datetime(2026, 1, 1, tzinfo=UTC)
    found = await memory(rows, skyline, embed, question="Why does Skyline run in two regions?", today=today)
    titles = [i.title for i in found.items]
    assert titles[0] == "ADR 0012: Run Skyline in two regions", titles
    old = next(i for i in found.items if i.status == "superseded")  # relevant, but superseded and oldest
    assert old.score == round((0.7 * old.relevance + 0.3 * old.recency) * 0.6, 4) and old.recency < top_recency(found)
    top = found.items[0]
    assert (top.kind, top.relation, top.source.author, top.source.date, top.source.line, top.source.document) == (
        "decision", "why", "Tomas Brandt", "2025-10-02", 20, "urn:doc:adr-7")
    outage = next(i for i in found.items if i.kind == "failure-pattern")
    assert outage.relation == "affected" and outage.source.author == "Mei Tanaka"
    assert [i.score for i in found.items] == sorted((i.score for i in found.items), reverse=True)

    # Without a question the same decisions rank newest first when equally relevant.
    newest = await memory(rows, skyline, embed, today=today, limit=2)
    assert len(newest.items) == 2 and "recency" in newest.ranking
    nothing = await memory(rows, await resolve(rows, "Demand Feed"), embed, today=today)
    assert nothing.items == [] and nothing.ranking.startswith("no decision")
