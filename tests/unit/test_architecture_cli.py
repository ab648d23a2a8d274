"""The architecture commands against a small HTTP server standing in for the gateway: each command asks
for the right path, query and body, prints what the answer holds, and turns a refusal (404 unknown
entity, 400 bad depth, an error inside a 200) into one line on stderr and exit status 1;
tg-intent-check exits 3 when it flags a mismatch."""

from __future__ import annotations

import asyncio
import doctest
import io
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
import tracegraph.cli.architecture
import tracegraph.cli.architecture_text
from aiohttp import web
from tracegraph.base.architecture.intent import ADVISORY
from tracegraph.cli.architecture import (
    MISMATCH_EXIT,
    main_dependencies,
    main_intent,
    main_memory,
    main_ownership,
)
from tracegraph.schemas.architecture import (
    ArchitectureResponse,
    CodeOwnersMatch,
    DependencyEdge,
    DependencyNode,
    DependencyResponse,
    IntentResponse,
    MemoryItem,
    MemoryResponse,
    Owner,
    OwnershipResponse,
    Reason,
    SentenceMatch,
    Source,
)
from tracegraph.schemas.base import Error
from support.local_http import served

E = "https://trustgraph.ai/e/"
CATALOG = Source(document="urn:doc:catalog", title="Service catalog", line=12, kind="graph")
CODEOWNERS = Source(document="urn:doc:codeowners", title="CODEOWNERS", line=4, kind="codeowners")
OVERVIEW = Source(document="urn:doc:overview", title="Architecture overview", line=4, kind="graph")
ADR = Source(document="urn:doc:adr-12", title="ADR-012 Event sourcing", line=3, author="alice", date="2024-03-01")


def answer(**fields: Any) -> dict[str, Any]:
    """A reply as the gateway sends one: the service's response, dumped with its wire names."""
    return ArchitectureResponse(**fields).model_dump(mode="json", by_alias=True)


def refusal(kind: str, message: str) -> dict[str, Any]:
    return {"error": {"type": kind, "message": message}}


@dataclass
class Gateway:
    """What the stand-in was asked (method, raw path, query, body), and what it answers next."""

    url: str
    asked: list[tuple[str, str, dict[str, str], Any]] = field(default_factory=list)
    replies: list[tuple[int, dict[str, Any]]] = field(default_factory=list)


@pytest.fixture
async def gateway() -> AsyncIterator[Gateway]:
    stand_in = Gateway("")

    async def reply(request: web.Request) -> web.Response:
        body = await request.json() if request.can_read_body else None
        stand_in.asked.append((request.method, request.raw_path.partition("?")[0], dict(request.query), body))
        status, payload = stand_in.replies.pop(0)
        return web.json_response(payload, status=status)

    app = web.Application()
    app.router.add_route("*", "/api/v1/{tail:.*}", reply)
    async with served(app) as url:
        stand_in.url = f"{url}/"
        yield stand_in


async def command(main: Callable[[list[str]], int], gateway: Gateway, *args: str,
                  reply: tuple[int, dict[str, Any]]) -> int:
    """A command's exit status; it runs its own event loop, so it runs in a thread."""
    gateway.replies.append(reply)
    return await asyncio.to_thread(main, ["-u", gateway.url, *args])


@pytest.mark.parametrize("module", [tracegraph.cli.architecture, tracegraph.cli.architecture_text])
def test_doctests(module):
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0


# --- tg-show-ownership ----------------------------------------------------------------------------

REVIEW_2024 = Source(document="urn:doc:r24", title="review-2024.md", line=5, date="2024-03-04", added="2026-11-27",
                     superseded_by=CATALOG.model_copy(update={"date": "2025-09-15"}), kind="graph")
OWNERSHIP = answer(operation="ownership", entity=E + "skyline", label="Skyline", ownership=OwnershipResponse(
    owners=[Owner(entity=E + "payments-team", label="Payments Team", kind="team", handles=["@acme/payments-team"],
                  relations=["is owned by"], origins=["graph"], since="2025-09-15",
                  sources=[CATALOG.model_copy(update={"date": "2025-09-15"})]),
            Owner(entity=E + "platform", label="@acme/platform", kind="team", handles=["@acme/platform"],
                  relations=["is owned by", "CODEOWNERS"], origins=["graph", "codeowners"], standing="earlier",
                  since="2024-03-04", until="2025-09-15",
                  sources=[REVIEW_2024, CODEOWNERS.model_copy(update={"added": "2026-11-27"})])],
    codeowners=[CodeOwnersMatch(path="services/skyline/", path_origin="graph", pattern="/services/skyline/",
                                owners=["@acme/platform"], source=CODEOWNERS)],
    discrepancy="The graph names Payments Team; CODEOWNERS names @acme/platform for services/skyline/. The graph is "
                "newer: CODEOWNERS still names @acme/platform, whom Service catalog replaced on 2025-09-15.",
    agreement="disagree", newer="graph"))


async def test_ownership_prints_the_current_owner_first_and_the_earlier_one_as_history(gateway, capsys):
    assert await command(main_ownership, gateway, "Skyline", "--flow", "prod", "-C", "platform",
                         reply=(200, OWNERSHIP)) == 0
    assert gateway.asked == [("GET", "/api/v1/ownership/Skyline", {"flow": "prod", "collection": "platform"}, None)]
    assert capsys.readouterr().out.splitlines() == [
        "Skyline is owned by Payments Team (@acme/payments-team), as its newest source says: Service catalog, "
        "line 12, dated 2025-09-15.",
        "Current owners (the graph and CODEOWNERS disagree; the graph is newer):",
        "  Payments Team  team  @acme/payments-team  since 2025-09-15",
        "    how: is owned by",
        "    sources: Service catalog, line 12 (2025-09-15)",
        "Earlier owners:",
        "  @acme/platform  team  @acme/platform  2024-03-04 – 2025-09-15",
        "    how: is owned by, CODEOWNERS",
        "    sources: review-2024.md, line 5 (2024-03-04; superseded on 2025-09-15 by Service catalog, line 12); "
        "CODEOWNERS, line 4 (undated; added 2026-11-27)",
        "CODEOWNERS:",
        "  services/skyline/ → /services/skyline/  @acme/platform  CODEOWNERS:4  (its code path in the graph)",
        "Discrepancy: The graph names Payments Team; CODEOWNERS names @acme/platform for services/skyline/. The graph "
        "is newer: CODEOWNERS still names @acme/platform, whom Service catalog replaced on 2025-09-15.",
    ]


async def test_an_undated_answer_prints_its_owners_as_equals(gateway, capsys):
    """A reply without dates or standings (an older service) still prints every owner, as current."""
    reply = answer(operation="ownership", label="Skyline", ownership=OwnershipResponse(
        owners=[Owner(entity=E + "a", label="A team", relations=["is owned by"], sources=[CATALOG]),
                Owner(entity=E + "b", label="B team", relations=["CODEOWNERS"], sources=[CODEOWNERS])],
        agreement="disagree"))
    assert await command(main_ownership, gateway, "Skyline", reply=(200, reply)) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[:2] == ["Skyline is owned by A team, as Service catalog, line 12 says.",
                         "Current owners (the graph and CODEOWNERS disagree):"]
    assert "  B team  unknown" in lines and "Earlier owners:" not in lines


async def test_a_name_is_one_path_segment_and_json_is_the_reply_as_it_came(gateway, capsys):
    assert await command(main_ownership, gateway, "Payments API/v2 #1", "--json", reply=(200, OWNERSHIP)) == 0
    assert gateway.asked[0][1] == "/api/v1/ownership/Payments%20API%2Fv2%20%231"
    assert gateway.asked[0][2] == {"flow": "default", "collection": "default"}
    assert json.loads(capsys.readouterr().out) == OWNERSHIP


async def test_an_unknown_entity_is_one_line_on_stderr_and_status_1(gateway, capsys):
    reply = (404, refusal("not-found", "no entity named 'Skylin' in collection 'default'"))
    assert await command(main_ownership, gateway, "Skylin", reply=reply) == 1
    out, err = capsys.readouterr()
    assert out == "" and err == "tg-show-ownership: error: not-found: no entity named 'Skylin' in collection 'default'\n"


async def test_an_error_inside_a_200_reply_fails_too(gateway, capsys):
    reply = (200, answer(operation="memory", error=Error(type="architecture-error", message="store unavailable")))
    assert await command(main_memory, gateway, "Skyline", reply=reply) == 1
    assert capsys.readouterr().err == "tg-show-memory: error: architecture-error: store unavailable\n"


async def test_no_owner_known(gateway, capsys):
    assert await command(main_ownership, gateway, "Skyline",
                         reply=(200, answer(operation="ownership", ownership=OwnershipResponse()))) == 0
    assert capsys.readouterr().out == "no owner known for Skyline\n"


# --- tg-show-dependencies -------------------------------------------------------------------------

SKYLINE, LEDGER, AUTH = E + "skyline", E + "ledger", E + "auth"
TREE = DependencyNode(entity=SKYLINE, label="Skyline", depth=0, children=[
    DependencyNode(entity=LEDGER, label="Ledger", depth=1, children=[
        DependencyNode(entity=SKYLINE, label="Skyline", depth=2, cycle=True)]),
    DependencyNode(entity=AUTH, label="Auth", depth=1)])
DEPENDENCIES = answer(operation="dependencies", entity=SKYLINE, label="Skyline", dependencies=DependencyResponse(
    root=TREE,
    edges=[DependencyEdge(source=SKYLINE, target=LEDGER, predicate=E + "depends-on", predicate_label="depends on",
                          depth=1, weight=0.92, sources=[OVERVIEW, ADR]),
           DependencyEdge(source=LEDGER, target=SKYLINE, predicate=E + "calls", predicate_label="calls",
                          depth=2, weight=0.8),
           DependencyEdge(source=SKYLINE, target=AUTH, predicate=E + "calls", predicate_label="calls",
                          depth=1, weight=1.0)],
    cycles=[["Skyline", "Ledger", "Skyline"]], predicates=["depends on", "calls"]))


async def test_dependencies_print_an_indented_tree_with_its_cycles(gateway, capsys):
    assert await command(main_dependencies, gateway, "Skyline", "--depth", "2", "--predicates", "depends on, calls",
                         reply=(200, DEPENDENCIES)) == 0
    assert gateway.asked[0][1:3] == ("/api/v1/dependencies/Skyline", {
        "flow": "default", "collection": "default", "depth": "2", "predicates": "depends on,calls"})
    assert capsys.readouterr().out.splitlines() == [
        "What Skyline depends on (following depends on, calls):",
        "Skyline",
        "  Ledger  (depends on 0.92)  from Architecture overview, line 4; ADR-012 Event sourcing, line 3",
        "    Skyline  (calls 0.80)  (cycle: Skyline → Ledger → Skyline)",
        "  Auth  (calls 1.00)",
        "Cycles:",
        "  Skyline → Ledger → Skyline",
    ]


async def test_what_depends_on_an_entity(gateway, capsys):
    reply = answer(operation="dependencies", label="Ledger", dependencies=DependencyResponse(
        root=DependencyNode(entity=LEDGER, label="Ledger", depth=0), predicates=["depends on"], truncated=True))
    assert await command(main_dependencies, gateway, "Ledger", "--direction", "in", reply=(200, reply)) == 0
    assert gateway.asked[0][2]["direction"] == "in"
    out, err = capsys.readouterr()
    assert out.splitlines() == ["What depends on Ledger (following depends on):", "  nothing found"]
    assert "cut short" in err


async def test_a_bad_depth_is_the_gateways_400(gateway, capsys):
    reply = (400, refusal("bad-request", "depth: must be 1, 2 or 3, not 7"))
    assert await command(main_dependencies, gateway, "Skyline", "--depth", "7", reply=reply) == 1
    assert gateway.asked[0][2]["depth"] == "7"
    assert capsys.readouterr().err == "tg-show-dependencies: error: bad-request: depth: must be 1, 2 or 3, not 7\n"


# --- tg-show-memory -------------------------------------------------------------------------------

MEMORY = answer(operation="memory", label="Skyline", memory=MemoryResponse(ranking="relevance and recency", items=[
    MemoryItem(node="urn:trustgraph:memory:adr-12", kind="decision", title="Move Skyline to event sourcing",
               status="accepted", relation="why", score=0.834, source=ADR,
               text="We keep every change to a booking as an event, so that the ledger can be rebuilt and "
                    "audited. Snapshots every 1,000 events keep replays short. " * 2),
    MemoryItem(node="urn:trustgraph:memory:pm-3", kind="failure-pattern", title="Retry storm after Ledger outage",
               relation="affected", score=0.5, source=Source(document="urn:doc:pm-3")),
]))


async def test_memory_prints_ranked_items_with_their_text_wrapped(gateway, capsys):
    assert await command(main_memory, gateway, "Skyline", "-q", "why event sourcing?", "--limit", "5",
                         reply=(200, MEMORY)) == 0
    assert gateway.asked[0][2] == {"flow": "default", "collection": "default", "q": "why event sourcing?",
                                   "limit": "5"}
    lines = capsys.readouterr().out.splitlines()
    assert lines[:3] == [
        "Memory about Skyline (ranked by relevance and recency):",
        " 1. decision: Move Skyline to event sourcing  [accepted]",
        "    2024-03-01 · alice · why · score 0.83 · ADR-012 Event sourcing, line 3",
    ]
    text = lines[3:-2]
    assert len(text) == 3 and all(line.startswith("    ") and len(line) <= 100 for line in text), text
    assert " ".join(line.strip() for line in text) == " ".join(MEMORY["memory"]["items"][0]["text"].split())
    assert lines[-2:] == [" 2. failure-pattern: Retry storm after Ledger outage",
                          "    affected · score 0.50 · urn:doc:pm-3"]


async def test_memory_prints_the_why_of_a_decision_with_its_lines(gateway, capsys):
    decision = MemoryItem(
        node="urn:trustgraph:memory:adr-31", kind="decision", title="ADR 0031: Use Kafka for Ledger events",
        relation="why", score=0.7, source=ADR.model_copy(update={"last_line": 26}), text="Chosen option: Kafka.",
        why="Consumers fall behind at month end.", reasons=[
            Reason(part="context", text="Consumers fall behind at month end.", line=9, last_line=10),
            Reason(part="driver", text="Replay of a day of events", line=14),
            Reason(part="option", text="RabbitMQ - simple, but no replay", line=20),
            Reason(part="option", text="Kafka - partitions keep per-account order", line=19, chosen=True),
            Reason(part="consequence", text="The Ledger team runs a Kafka cluster.", line=30)])
    told = MemoryItem(node="urn:trustgraph:memory:pm-4", kind="failure-pattern", title="Ledger outage",
                      relation="affected", score=0.4, source=Source(document="urn:doc:pm-4"), why="A full disk.")
    reply = answer(operation="memory", label="Ledger", memory=MemoryResponse(items=[decision, told]))
    assert await command(main_memory, gateway, "Ledger", reply=(200, reply)) == 0
    assert capsys.readouterr().out.splitlines() == [
        "Memory about Ledger:",
        " 1. decision: ADR 0031: Use Kafka for Ledger events",
        "    2024-03-01 · alice · why · score 0.70 · ADR-012 Event sourcing, lines 3–26",
        "    Chosen option: Kafka.",
        "    Context (lines 9–10): Consumers fall behind at month end.",
        "    Decision drivers (line 14): Replay of a day of events",
        "    Options considered:",
        "      chosen (line 19): Kafka - partitions keep per-account order",
        "      not chosen (line 20): RabbitMQ - simple, but no replay",
        "    Consequences (line 30): The Ledger team runs a Kafka cluster.",
        " 2. failure-pattern: Ledger outage",
        "    affected · score 0.40 · urn:doc:pm-4",
        "    Root cause: A full disk.",
    ]


# --- tg-intent-check ------------------------------------------------------------------------------


def intent_answer(similarity: float) -> dict[str, Any]:
    mismatch = similarity < 0.6
    return answer(operation="intent-check", intent=IntentResponse(
        similarity=similarity, threshold=0.6, mismatch=mismatch, advisory=ADVISORY if mismatch else "",
        model="all-MiniLM-L6-v2", explanation=[
            SentenceMatch(side="change", sentence="Add exponential backoff retries for webhook delivery",
                          nearest="We should retry failed webhook deliveries with exponential backoff.",
                          similarity=0.8123),
            SentenceMatch(side="work-item", sentence="Exhausted events go to a dead-letter queue",
                          nearest="Events that still fail are published to the webhook-dlq topic.",
                          similarity=0.6)]))


async def test_a_matching_change_prints_ok_and_exits_0(gateway, capsys):
    status = await command(main_intent, gateway, "--change", "Add retries", "--work-item", "PAY-1423 retries",
                           "--flow", "prod", "-C", "payments", reply=(200, intent_answer(0.7432)))
    assert status == 0
    assert gateway.asked == [("POST", "/api/v1/intent-check", {"flow": "prod"},
                              {"change": "Add retries", "work-item": "PAY-1423 retries", "collection": "payments"})]
    assert capsys.readouterr().out.splitlines() == [
        "similarity 0.7432  threshold 0.60  OK",
        "closest sentences:",
        "  0.81  change: Add exponential backoff retries for webhook delivery",
        "        work item: We should retry failed webhook deliveries with exponential backoff.",
        "  0.60  work item: Exhausted events go to a dead-letter queue",
        "        change: Events that still fail are published to the webhook-dlq topic.",
        "model: all-MiniLM-L6-v2",
    ]


async def test_a_mismatch_prints_the_advisory_and_exits_3(gateway, capsys, tmp_path, monkeypatch):
    (tmp_path / "pr.diff").write_text("--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n")
    monkeypatch.setattr("sys.stdin", io.StringIO("BILL-310: invoice totals"))
    status = await command(main_intent, gateway, "--change-file", str(tmp_path / "pr.diff"), "--work-item-file", "-",
                           "--threshold", "0.65", reply=(200, intent_answer(0.3121)))
    assert status == MISMATCH_EXIT == 3
    assert gateway.asked[0][3] == {"change": "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n",
                                   "work-item": "BILL-310: invoice totals", "threshold": 0.65,
                                   "collection": "default"}
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "similarity 0.3121  threshold 0.60  MISMATCH"
    assert " ".join(lines[1:3]) == ADVISORY


async def test_a_mismatch_exits_3_with_json_too(gateway, capsys):
    reply = intent_answer(0.2)
    assert await command(main_intent, gateway, "--change", "a", "--work-item", "b", "--json",
                         reply=(200, reply)) == MISMATCH_EXIT
    assert json.loads(capsys.readouterr().out) == reply


async def test_intent_errors_exit_1(gateway, capsys, tmp_path):
    reply = (400, refusal("bad-request", "threshold: Input should be less than or equal to 1"))
    assert await command(main_intent, gateway, "--change", "a", "--work-item", "b", "--threshold", "2",
                         reply=reply) == 1
    assert capsys.readouterr().err == ("tg-intent-check: error: bad-request: threshold: Input should be less than "
                                       "or equal to 1\n")
    missing = tmp_path / "missing.md"
    assert await asyncio.to_thread(main_intent, ["--change-file", str(missing), "--work-item", "b"]) == 1
    assert capsys.readouterr().err == f"tg-intent-check: error: cannot read --change-file {missing}: " \
                                      "No such file or directory\n"


def test_stdin_is_read_once_at_most(capsys):
    with pytest.raises(SystemExit) as exit:
        main_intent(["--change-file", "-", "--work-item-file", "-"])
    assert exit.value.code == 2 and "only one of --change-file and --work-item-file" in capsys.readouterr().err


# --- --as-of on the entity commands -----------------------------------------------------------------

@pytest.mark.parametrize("main, operation", [(main_ownership, "ownership"), (main_dependencies, "dependencies"),
                                             (main_memory, "memory")])
async def test_as_of_asks_for_the_date_and_the_answer_says_it_stands_there(gateway, capsys, main, operation):
    reply = answer(operation=operation, entity=E + "skyline", label="Skyline", **{"as-of": "2024-06-01T00:00:00Z"})
    assert await command(main, gateway, "Skyline", "--as-of", "2024-06-01", reply=(200, reply)) == 0
    assert gateway.asked[0][2] == {"flow": "default", "collection": "default", "as-of": "2024-06-01"}
    assert capsys.readouterr().out.splitlines()[0] == "As of 2024-06-01 (--as-of):"


async def test_as_of_without_history_notes_it_on_stderr(gateway, capsys):
    reply = answer(operation="memory", entity=E + "skyline", label="Skyline", notes=["this collection keeps no history"])
    assert await command(main_memory, gateway, "Skyline", "--as-of", "2024-06-01", reply=(200, reply)) == 0
    captured = capsys.readouterr()
    assert captured.err == "note: this collection keeps no history\n" and not captured.out.startswith("As of")


async def test_a_bad_as_of_is_one_line_naming_the_option_and_exit_1(gateway, capsys):
    message = "as-of: 'soon' is not a date; use YYYY-MM-DD, YYYY-MM or an ISO 8601 date-time"
    assert await command(main_dependencies, gateway, "Skyline", "--as-of", "soon",
                         reply=(400, refusal("bad-request", message))) == 1
    assert capsys.readouterr().err == f"tg-show-dependencies: error: bad-request: {message}\n"
