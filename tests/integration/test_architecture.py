"""The architecture questions end to end on the sample corpus: every processor in-process, the gateway
with tokens over real HTTP. CODEOWNERS, the two ADRs and the post-mortem go through the librarian and
both extractors; the routes answer from what they wrote, and ownership asked through search is an
explained answer whose selected edges resolve to the CODEOWNERS file and line."""

from __future__ import annotations

import asyncio

import pytest

from tracegraph.base.errors import RemoteError
from tracegraph.base.provenance.shacl import validate_trace
from tracegraph.cli.api import Api
from tracegraph.schemas.rdf import Triple

from support.ingest import CORPUS, ingest_stack, load_and_wait
from support.stack import wait_until_async

pytestmark = pytest.mark.timeout(300)

TG = "https://trustgraph.ai/ns/"
TOKENS = "alice alice-token\nbob bob-token\n"
ARCH = {"collection": "arch"}
FILES = ("CODEOWNERS", "adr-0007-skyline-storage-gateway.md", "adr-0012-skyline-two-regions.md",
         "postmortem-2024-06-skyline-outage.md", "skyline-review-2024.md", "skyline-review-2025.md")


async def owned(api: Api, name: str) -> dict:
    return (await api.get(f"ownership/{name}", ARCH))["ownership"]


@pytest.fixture
async def services(tmp_path):
    """(alice's Api, bob's Api, document ids by file) once alice's architecture documents are read."""
    tokens = tmp_path / "tokens"
    tokens.write_text(TOKENS)
    async with ingest_stack(tmp_path, gateway_tokens=tokens) as (_api, stack):
        url = f"http://127.0.0.1:{stack['gateway'].port}/"
        alice, bob = Api(url, token="alice-token"), Api(url, token="bob-token")
        ids = {name: await load_and_wait(alice, CORPUS / name, collection="arch") for name in FILES}
        # The architecture extractor reads whole documents beside the chunker: wait for its rules too.
        await wait_until_async(lambda: _has_rules(alice), timeout=60, what="CODEOWNERS rules read")
        yield alice, bob, ids


async def _has_rules(api: Api) -> bool:
    return bool((await owned(api, "Storage Gateway"))["codeowners"])


async def check_ownership_merges_the_graph_with_codeowners_and_notes_a_discrepancy(services):
    alice, _bob, ids = services
    skyline = await owned(alice, "Skyline")
    by_handle = {h: o for o in skyline["owners"] for h in o["handles"]}
    assert {"@corvid/forecasting-guild", "@ada-kern"} <= set(by_handle), skyline
    graph_owners = [o for o in skyline["owners"] if "graph" in o["origins"]]
    assert any("grid analytics" in o["label"].lower() for o in graph_owners), skyline
    assert skyline["agreement"] == "disagree" and "forecasting" in skyline["discrepancy"].lower(), skyline
    (rule,) = [m for m in skyline["codeowners"] if m["pattern"].strip("/") == "services/skyline"]
    assert rule["path"] == "services/skyline/" and rule["path-origin"] == "graph", rule
    assert rule["source"]["document"] == ids["CODEOWNERS"] and rule["source"]["line"] > 1, rule
    # The current owner first, dated by its newest source; the owners the 2025 review replaced are history,
    # their 2024 statements marked superseded by it; CODEOWNERS (undated) is the older side.
    first = skyline["owners"][0]
    assert "grid analytics" in first["label"].lower() and first["standing"] == "current", first
    assert [(s["document"], s["date"]) for s in first["sources"]] == [(ids["skyline-review-2025.md"], "2025-09-15")]
    current = [o for o in skyline["owners"] if o["standing"] == "current"]
    assert {s["document"] for o in current for s in o["sources"]} == {ids["skyline-review-2025.md"]}, current
    guild = by_handle["@corvid/forecasting-guild"]
    assert (guild["standing"], guild["since"], guild["until"]) == ("earlier", "2024-03-04", "2025-09-15"), guild
    stated = next(s for s in guild["sources"] if s["kind"] == "graph")
    assert stated["document"] == ids["skyline-review-2024.md"] and stated["date"] == "2024-03-04", stated
    assert stated["superseded-by"]["document"] == ids["skyline-review-2025.md"], stated
    assert all(s["date"] or s["added"] for o in skyline["owners"] for s in o["sources"]), skyline
    assert skyline["newer"] == "graph" and "The graph is newer" in skyline["discrepancy"], skyline
    assert skyline["owners"].index(guild) > skyline["owners"].index(first)

    # The ADR's "owned by the Platform team" and CODEOWNERS' @corvid/platform-team are one owner seen twice;
    # CODEOWNERS also lists a person the graph does not know as an owner, and the note says so.
    gateway = await owned(alice, "the Storage Gateway")
    platform = gateway["owners"][0]
    assert set(platform["origins"]) == {"graph", "codeowners"} and "@corvid/platform-team" in platform["handles"]
    assert gateway["agreement"] == "disagree" and "@mei-tanaka" in gateway["discrepancy"], gateway


async def check_dependencies_report_the_cycle_instead_of_looping(services):
    alice, _bob, ids = services
    tree = (await alice.get("dependencies/Skyline", {**ARCH, "depth": "3"}))["dependencies"]
    pairs = {(e["source-label"], e["target-label"]) for e in tree["edges"]}
    assert {("Skyline", "Demand Feed"), ("Demand Feed", "Storage Gateway"), ("Storage Gateway", "Skyline")} <= pairs
    assert ["Skyline", "Demand Feed", "Storage Gateway", "Skyline"] in tree["cycles"], tree["cycles"]
    cited = {s["document"] for e in tree["edges"] for s in e["sources"]}
    assert ids["adr-0007-skyline-storage-gateway.md"] in cited
    assert all(0 < e["weight"] <= 1 for e in tree["edges"])

    users = (await alice.get("dependencies/Orbis Cloud", {**ARCH, "direction": "in"}))["dependencies"]
    assert "Storage Gateway" in {e["target-label"] for e in users["edges"]}, users
    with pytest.raises(RemoteError, match="depth"):
        await alice.get("dependencies/Skyline", {**ARCH, "depth": "9"})


async def check_memory_is_ranked_and_carries_author_and_date(services):
    alice, _bob, ids = services
    found = (await alice.get("memory/Skyline", {**ARCH, "q": "Why does Skyline run in two regions?"}))["memory"]
    kinds = {i["kind"] for i in found["items"]}
    assert {"decision", "failure-pattern"} <= kinds, found
    top = found["items"][0]
    assert "two regions" in top["title"].lower() and top["source"]["author"] == "Tomas Brandt", top
    assert top["source"]["date"] == "2025-10-02" and top["source"]["document"] == ids["adr-0012-skyline-two-regions.md"]
    assert [i["score"] for i in found["items"]] == sorted((i["score"] for i in found["items"]), reverse=True)
    assert "recency" in found["ranking"]
    # Its why, part by part with the ADR's lines: the context, and the option chosen over the others.
    parts = {r["part"] for r in top["reasons"]}
    assert {"context", "option", "consequence"} <= parts, top["reasons"]
    (chosen,) = [r for r in top["reasons"] if r.get("chosen")]
    assert "second cloud provider" in chosen["text"] and chosen["line"] > top["reasons"][0]["line"], chosen
    assert all(r["line"] for r in top["reasons"]), top["reasons"]


async def check_intent_check_flags_the_unrelated_change(services):
    alice, _bob, _ids = services
    item = "Route Skyline's forecast writes through the Storage Gateway instead of the Orbis Cloud."
    same = (await alice.request("intent-check", {"change": "Skyline now writes its forecasts through the "
                                                 "Storage Gateway, with retries.", "work-item": item}))["intent"]
    other = (await alice.request("intent-check", {"change": "Fix the colour of the invoice table header on the "
                                                  "billing page.", "work-item": item}))["intent"]
    assert not same["mismatch"] and other["mismatch"] and same["similarity"] > other["similarity"], (same, other)
    assert other["advisory"].startswith("The code changes in this PR appear semantically distant")


async def check_another_users_entity_is_not_found(services):
    _alice, bob, _ids = services
    for path in ("ownership/Skyline", "dependencies/Skyline", "memory/Skyline"):
        with pytest.raises(RemoteError, match="not found|not-found|unknown"):
            await bob.get(path, ARCH)


async def check_ownership_through_search_is_explained_down_to_the_codeowners_line(services):
    alice, _bob, ids = services
    answer = await alice.request("search", {"query": "Who owns Skyline?", **ARCH})
    assert answer["query_type"] == "ownership" and answer["confidence"]["retrieval_strategies_used"] == ["ownership"]
    assert "@corvid/forecasting-guild" in answer["response"] and "disagree" in answer["response"], answer["response"]
    assert answer["response"].index("Grid Analytics") < answer["response"].index("Earlier owners: Forecasting Guild")
    why = await alice.request("search", {"query": "Why does Skyline run in two regions?", **ARCH})
    assert why["query_type"] == "memory" and why["confidence"]["retrieval_strategies_used"] == ["memory"]
    assert "ADR 0012: Run Skyline in two regions" in why["response"], why["response"]
    rows = (await alice.flow_service("default", "sparql", {**ARCH, "query": f"""
        PREFIX tg: <https://trustgraph.ai/ns/> PREFIX prov: <http://www.w3.org/ns/prov#>
        SELECT ?n ?doc WHERE {{
          GRAPH <urn:graph:retrieval> {{ ?sel tg:edge ?edge }}
          FILTER(isTRIPLE(?edge) && PREDICATE(?edge) = tg:codeOwner)
          GRAPH <urn:graph:source> {{ ?sg tg:contains ?edge ; prov:wasDerivedFrom ?line .
                                      ?line tg:lineNumber ?n ; prov:wasDerivedFrom ?doc }} }}"""}))["bindings"]
    assert rows and {r["doc"]["i"] for r in rows} == {ids["CODEOWNERS"]}, rows

    # Both traces, the rules and records, and their provenance all pass the SHACL shapes.
    everything = (await alice.flow_service("default", "triples", {**ARCH, "g": "*", "limit": 100000}))["response"]
    assert any(t["p"]["i"] == TG + "codeOwner" for t in everything)
    report = await asyncio.to_thread(validate_trace, [Triple.model_validate(t) for t in everything])
    assert report.conforms, "\n".join(report.messages)


async def test_the_architecture_questions_on_the_sample_corpus(services):
    """One stack for every check (starting it and reading the corpus is most of the time)."""
    for check in (check_ownership_merges_the_graph_with_codeowners_and_notes_a_discrepancy,
                  check_dependencies_report_the_cycle_instead_of_looping,
                  check_memory_is_ranked_and_carries_author_and_date,
                  check_intent_check_flags_the_unrelated_change,
                  check_another_users_entity_is_not_found,
                  check_ownership_through_search_is_explained_down_to_the_codeowners_line,
                  check_names_in_any_case_and_unknown_names,
                  check_removing_codeowners_removes_its_rules):
        await check(services)


async def check_names_in_any_case_and_unknown_names(services):
    """A lower-cased question is answered as written with capitals; a name the collection does not know
    is said to be unknown, with the nearest entities, by search and by the ownership route."""
    alice, _bob, _ids = services
    cased = await alice.request("search", {"query": "Who owns Skyline?", **ARCH})
    for question in ("who owns skyline?", "WHO OWNS SKYLINE?", "who owns the skyline service?"):
        lower = await alice.request("search", {"query": question, **ARCH})
        assert lower["query_type"] == cased["query_type"] == "ownership", lower
        assert lower["confidence"]["retrieval_strategies_used"] == ["ownership"], lower
        assert lower["response"] == cased["response"], (question, lower["response"])
    unknown = await alice.request("search", {"query": "Who owns Quasar?", **ARCH})
    assert unknown["response"].startswith("No entity named Quasar in this collection; nearest: "), unknown["response"]
    assert unknown["evidence"] == [] and unknown["confidence"]["low_confidence_warning"]
    assert unknown["confidence"]["confidence"] == 0 and unknown["confidence"]["warning_reasons"]
    with pytest.raises(RemoteError, match="nearest: "):
        await alice.get("ownership/Quasar", ARCH)
    assert (await owned(alice, "skyline"))["owners"] == (await owned(alice, "Skyline"))["owners"]


async def check_removing_codeowners_removes_its_rules(services):
    """Removal follows the provenance chain: the rules leave with their file, the graph's owners stay."""
    alice, _bob, ids = services
    await alice.request("librarian", {"operation": "remove-document", "document-id": ids["CODEOWNERS"]})
    skyline = await wait_until_async(lambda: _without_rules(alice), timeout=30, what="rules removed")
    assert skyline["agreement"] == "graph-only" and skyline["owners"], skyline


async def _without_rules(api: Api) -> dict | None:
    found = await owned(api, "Skyline")
    return found if not found["codeowners"] else None
