"""Answers as of a date through the real stack: the two dated Skyline reviews of the sample corpus
(2024: owned by the Forecasting Guild; 2025: by the Grid Analytics team) ingested by every processor
in-process, the triples processor keeping their history, then GraphRAG, Document RAG and search asked
over the gateway as of a day between the reviews and as of now, and the commands given a bad date; the
ownership route and its command as of a date; and search asked "Who owned Skyline in 2024?"."""

from __future__ import annotations

import aiohttp
import pytest

from support.ingest import CORPUS, ingest_stack, load_and_wait
from support.procs import tg_async

pytestmark = pytest.mark.timeout(300)

TG = "https://trustgraph.ai/ns/"
QUESTION = "Who owns Skyline?"
BETWEEN = "2025-01-01"  # after the 2024 review, before the 2025 one
OLD_OWNER, NEW_OWNER = "Forecasting Guild", "Grid Analytics"
OWNED_BY_OLD, OWNED_BY_NEW = f"Skyline is owned by {OLD_OWNER}", f"Skyline is owned by {NEW_OWNER}"


@pytest.fixture
async def reviews(tmp_path):
    """(api, gateway URL) with both Skyline reviews ingested into the collection `skyline`."""
    async with ingest_stack(tmp_path, extractor="offline") as (api, stack):
        for name in ("skyline-review-2024.md", "skyline-review-2025.md"):
            await load_and_wait(api, CORPUS / name, collection="skyline")
        yield api, f"http://127.0.0.1:{stack['gateway'].port}/"


async def ask(api, service: str, **fields) -> tuple[str, list[dict], dict]:
    """(answer text, explain events, last message)."""
    messages = [m async for m in api.stream("default", service, {"query": QUESTION, "collection": "skyline",
                                                                  **fields})]
    answer = "".join(m.get("response", "") for m in messages if m.get("message_type") != "explain")
    return answer, [m for m in messages if m.get("message_type") == "explain"], messages[-1]


def values(events: list[dict], predicate: str) -> list[str]:
    return [t["o"].get("v") or t["o"].get("i") for e in events for t in e["explain_triples"]
            if t["p"]["i"] == TG + predicate]


async def test_graph_rag_answers_as_the_graph_held_then_and_now(reviews):
    api, _ = reviews
    then, events, _ = await ask(api, "graph-rag", **{"as-of": BETWEEN})
    assert then.startswith("As of 2025-01-01 (--as-of):\n"), then
    assert OWNED_BY_OLD in then and NEW_OWNER not in then, then  # nothing of the later review
    assert values(events, "asOf") == ["2025-01-01T00:00:00Z"]
    assert values(events, "halfLifeDays") == ["365"]
    assert values(events, "stalenessWeight")

    today, events, _ = await ask(api, "graph-rag", **{"half-life-days": 90})
    assert OWNED_BY_NEW in today and OWNED_BY_OLD not in today, today  # the 2024 review's owner was superseded
    assert values(events, "asOf") == [] and values(events, "halfLifeDays") == ["90"]
    assert values(events, "supersededValue"), "the new owner's edge names the record it superseded"


async def test_document_rag_leaves_out_the_review_written_later(reviews):
    api, _ = reviews
    then, _, final = await ask(api, "document-rag", **{"as-of": BETWEEN})
    assert then.startswith("As of 2025-01-01 (--as-of):\n") and NEW_OWNER not in then, then
    assert [s["title"] for s in final["sources"]] == ["skyline-review-2024"], final["sources"]
    today, events, final = await ask(api, "document-rag")
    assert final["sources"][0]["title"] == "skyline-review-2025", final["sources"]  # newer, and not superseded
    assert values(events, "stalenessWeight")


async def test_search_keeps_the_evidence_that_held_then(reviews):
    api, _ = reviews
    # The hybrid strategies, named: unnamed, the ownership records answer an ownership question.
    then, _, final = await ask(api, "search", **{"as-of": BETWEEN,
                                                 "strategies": ["graph", "ppr", "sparql", "bm25", "vector"]})
    texts = " ".join(e["text"] for e in final["evidence"])
    assert OLD_OWNER in texts and NEW_OWNER not in texts, texts
    assert then.startswith("As of 2025-01-01 (--as-of):")


@pytest.mark.parametrize("command", ["tg-invoke-graph-rag", "tg-invoke-document-rag", "tg-search"])
async def test_the_commands_refuse_a_bad_date_naming_the_option(reviews, command):
    _, url = reviews
    code, out, err = await tg_async(command, "-u", url, "-C", "skyline", "-q", QUESTION, "--as-of", "soon")
    assert code == 1 and "as-of: 'soon' is not a date" in err, (out, err)
    code, out, err = await tg_async(command, "-u", url, "-C", "skyline", "-q", QUESTION, "--as-of", BETWEEN)
    assert code == 0 and out.startswith("As of 2025-01-01 (--as-of):"), (out, err)


async def test_the_ownership_route_answers_as_of_a_date_and_refuses_a_bad_one(reviews):
    api, url = reviews
    then = await api.get("ownership/Skyline", {"collection": "skyline", "as-of": BETWEEN})
    owners = [o["label"] for o in then["ownership"]["owners"] if o.get("standing", "current") == "current"]
    assert then["as-of"] == "2025-01-01T00:00:00Z" and OLD_OWNER in owners and NEW_OWNER not in " ".join(owners), then
    now = await api.get("ownership/Skyline", {"collection": "skyline"})
    assert now.get("as-of") is None and any(NEW_OWNER in o["label"] for o in now["ownership"]["owners"]), now
    async with aiohttp.ClientSession() as session:
        async with session.get(f"{url}api/v1/ownership/Skyline", params={"collection": "skyline", "as-of": "soon"}) as r:
            status, body = r.status, await r.json()
    assert status == 400 and body["error"]["message"].startswith("as-of: 'soon' is not a date"), body
    code, out, err = await tg_async("tg-show-ownership", "-u", url, "-C", "skyline", "Skyline", "--as-of", BETWEEN)
    assert code == 0 and out.startswith("As of 2025-01-01 (--as-of):\n") and OLD_OWNER in out, (out, err)
    code, out, err = await tg_async("tg-show-ownership", "-u", url, "-C", "skyline", "Skyline", "--as-of", "soon")
    assert code == 1 and "as-of: 'soon' is not a date" in err and len(err.strip().splitlines()) == 1, (out, err)


async def test_search_answers_who_owned_skyline_in_2024_with_the_2024_owner(reviews):
    api, _ = reviews
    answer, events, final = await ask(api, "search", query="Who owned Skyline in 2024?")
    assert answer.startswith("As of 2024-12-31 (from 'in 2024' in the question):\n"), answer
    assert OLD_OWNER in answer and NEW_OWNER not in answer, answer
    assert values(events, "phraseText") == ["in 2024"] and values(events, "asOf") == ["2024-12-31T23:59:59Z"]
