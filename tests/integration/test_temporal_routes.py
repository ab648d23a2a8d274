"""The history and review routes and their commands, end to end: every processor in-process, the
gateway with tokens over real HTTP, the real triples processor answering `temporal` and `review`."""

from __future__ import annotations

import json

import pytest

from tracegraph.base.errors import RemoteError
from tracegraph.cli.api import Api
from tracegraph.cli.library_upload import add_document, process, wait_for_extraction

from support.ingest import CORPUS, ingest_stack, load_and_wait
from support.procs import tg_async
from support.stack import start_flow, wait_until_async

pytestmark = pytest.mark.timeout(300)

TOKENS = "alice alice-token admin\nbob bob-token\n"
HELIOS = "https://trustgraph.ai/e/helios-grid"
BEFORE, AFTER = "2000-01-01", "2999-01-01"  # before anything was recorded; after everything was
STRICT = {"flow": "strict", "collection": "strict"}  # a flow that queues facts under 0.85 confidence for review


async def queued(api: Api) -> list[dict]:
    """The strict flow's pending review items, once there are any."""
    return await wait_until_async(lambda: _pending(api), timeout=30, what="doubtful facts queued")


async def _pending(api: Api) -> list[dict]:
    return (await api.get("review", STRICT))["items"]


@pytest.fixture
async def gateway(tmp_path):
    """(gateway URL, alice's Api, bob's Api): alice, an admin, loaded helios-grid.md into `research` through
    the default flow, and corvid-analytics.md into `strict` through a flow that queues doubtful facts."""
    tokens = tmp_path / "tokens"
    tokens.write_text(TOKENS)
    async with ingest_stack(tmp_path, gateway_tokens=tokens) as (_api, stack):
        await start_flow(stack.backend, "strict", "default", {"review-threshold": "0.85"})
        await stack.joined("strict")
        url = f"http://127.0.0.1:{stack['gateway'].port}/"
        alice, bob = Api(url, token="alice-token"), Api(url, token="bob-token")
        await load_and_wait(alice, CORPUS / "helios-grid.md", collection="research")
        meta = await add_document(alice, CORPUS / "corvid-analytics.md", collection="strict")
        await process(alice, meta["id"], "strict", "strict")
        await wait_for_extraction(alice, "strict", [meta["id"]], "strict", 120)
        yield url, alice, bob


async def test_the_graph_at_a_date_and_the_changes_between_two(gateway):
    _url, alice, bob = gateway
    now = await alice.get("temporal", {"collection": "research"})
    assert now["facts"] and now["at"], now
    about = await alice.get("temporal", {"collection": "research", "subject": HELIOS, "limit": "3"})
    assert 0 < len(about["facts"]) <= 3 and all(f["s"]["i"] == HELIOS for f in about["facts"]), about
    assert about["labels"].get(HELIOS) == "Helios Grid", about["labels"]
    # As the system knew it before anything was loaded, the graph held nothing.
    assert (await alice.get("temporal", {"collection": "research", "known": BEFORE}))["facts"] == []

    recorded = await alice.get("temporal", {"collection": "research", "from": BEFORE, "to": AFTER,
                                            "axis": "recorded"})
    assert recorded["changes"] and {c["change"] for c in recorded["changes"]} == {"added"}, recorded
    assert all(c["fact"]["sources"] for c in recorded["changes"])

    # Bob's "research" is his own, and empty: nothing of alice's history reaches him.
    assert (await bob.get("temporal", {"collection": "research"}))["facts"] == []
    for name in ("user", "workspace"):
        with pytest.raises(RemoteError, match="access-denied"):
            await bob.get("temporal", {"collection": "research", name: "alice"})


async def test_the_review_queue_is_an_admins_and_records_who_approved(gateway):
    _url, alice, bob = gateway
    first = (await queued(alice))[0]["id"]
    verdict = await alice.request("review", {"operation": "approve", "ids": [first, "no-such-item"],
                                             "collection": "strict", "reviewer": "mallory"}, params={"flow": "strict"})
    assert (verdict["changed"], verdict["unknown"]) == ([first], ["no-such-item"]), verdict
    approved = (await alice.get("review", {**STRICT, "status": "approved"}))["items"]
    assert [(i["id"], i["reviewed-by"]) for i in approved] == [(first, "alice")]

    with pytest.raises(RemoteError, match="access-denied"):
        await bob.get("review", STRICT)
    with pytest.raises(RemoteError, match="access-denied"):
        await bob.request("review", {"operation": "reject", "ids": [first]}, params={"flow": "strict"})
    with pytest.raises(RemoteError, match="access-denied"):
        await bob.flow_service("strict", "review", {"operation": "list", "collection": "strict"})


async def test_the_commands_print_history_and_review(gateway):
    url, alice_api, _bob = gateway
    alice = ("-u", url, "--token", "alice-token")
    research, strict = ("-C", "research"), ("-C", "strict", "-f", "strict")

    code, out, err = await tg_async("tg-graph-at", *alice, *research, "--subject", "Helios Grid")
    assert code == 0 and "fact(s) held at" in out and "Helios Grid" in out, (out, err)
    code, out, err = await tg_async("tg-graph-at", *alice, *research, "--known", BEFORE)
    assert code == 0 and out.startswith("no facts held at"), (out, err)
    code, out, err = await tg_async("tg-graph-at", *alice, *research, "--at", "yesterday")
    assert code == 1 and err.startswith("tg-graph-at: error: bad-request: at: 'yesterday' is not a date"), err

    code, out, err = await tg_async("tg-graph-diff", *alice, *research, "--from", BEFORE, "--to", AFTER,
                                    "--axis", "recorded", "--format", "json")
    assert code == 0 and {c["change"] for c in json.loads(out)["changes"]} == {"added"}, (out, err)

    await queued(alice_api)
    code, out, err = await tg_async("tg-show-review-queue", *alice, *strict, "--format", "json")
    assert code == 0, err
    item = json.loads(out)["items"][0]
    code, out, err = await tg_async("tg-show-review-queue", *alice, *strict)
    assert code == 0 and item["id"] in out and f"{item['confidence']:.2f}" in out, (out, err)
    code, out, err = await tg_async("tg-review", *alice, *strict, "--reject", item["id"], "no-such-item")
    assert code == 1 and out == f"rejected 1: {item['id']}\n", (out, err)
    assert err == "tg-review: error: not in the review queue: no-such-item\n", err
    code, out, err = await tg_async("tg-show-review-queue", *alice, *strict, "--status", "rejected")
    assert code == 0 and item["id"] in out and "rejected" in out, (out, err)

    code, out, err = await tg_async("tg-show-review-queue", "-u", url, "--token", "bob-token", *strict)
    assert code == 1 and "access-denied" in err and "admin" in err, err
