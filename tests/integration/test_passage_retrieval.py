"""Multi-hop retrieval on real text: about 30 public HotpotQA passages (read from ../shared/data/multihop,
never copied into the project) go through the whole in-process stack, one document per passage.
"Who directed the film that was shot in or around Leland, North Carolina in 1986?" needs the Leland
passage, which names the film, and the film's own passage, which names its director and shares no
word with the question but the year. Personalised PageRank reaches the second through the film's
title; every answering service must cite both, and every selected item must resolve to its document."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path

import pytest

from tracegraph.base.provenance.vocab import is_knowledge
from tracegraph.cli.library_upload import process, wait_for_extraction
from tracegraph.schemas.rdf import Triple

from support.ingest import ingest_stack
from support.stack import wait_until_async

pytestmark = pytest.mark.timeout(180)

SAMPLE = Path(os.environ.get("TG_MULTIHOP_DATA") or Path(__file__).resolve().parents[3] / "shared" / "data" / "multihop")
QUESTION_ID = "5a8718c25542991e771816c7"  # the Leland question
DISTRACTORS = range(25, 53)  # the neighbouring questions' passages: same domains, different answers
RESOLVES = """
PREFIX tg: <https://trustgraph.ai/ns/>
PREFIX prov: <http://www.w3.org/ns/prov#>
SELECT ?edge ?doc WHERE {
  GRAPH <urn:graph:retrieval> { <%s> tg:selectedEdge/tg:edge ?edge }
  OPTIONAL { GRAPH <urn:graph:source> { ?sg tg:contains ?edge ; prov:wasDerivedFrom ?chunk .
                                        ?chunk prov:wasDerivedFrom ?doc } ?doc a tg:Document } }"""


@pytest.fixture(scope="module")
def sample() -> tuple[dict, list[dict]]:
    path = SAMPLE / "hotpotqa-train-100.json"
    if not path.exists():
        pytest.skip(f"the public multi-hop sample is not at {path} (set TG_MULTIHOP_DATA)")
    data = json.loads(path.read_text())
    question = next(q for q in data["questions"] if q["id"] == QUESTION_ID)
    wanted = list(dict.fromkeys([*question["supporting"], *DISTRACTORS]))
    return question, [{"index": i, **data["corpus"][i]} for i in wanted]


@pytest.fixture
async def stack(tmp_path, sample):
    question, passages = sample
    async with ingest_stack(tmp_path) as (api, _):
        documents: dict[str, int] = {}
        for passage in passages:
            reply = await api.request("librarian", {
                "operation": "add-document", "collection": "default",
                "document-metadata": {"id": "", "kind": "text/plain", "title": passage["title"],
                                      "collection": "default"},
                "content": base64.b64encode(passage["text"].encode()).decode()})
            documents[reply["document-metadata"]["id"]] = passage["index"]
            await process(api, reply["document-metadata"]["id"], "default", "default")
        await wait_for_extraction(api, "default", list(documents), "default", 120)
        await wait_until_async(lambda: passages_indexed(api), timeout=30, what="the passage index to hold the sample")
        yield api, question, documents


async def passages_indexed(api) -> bool:
    found = await api.flow_service("default", "passage-keywords", {"query": "Maximum Overdrive Leland", "limit": 5})
    return len(found.get("matches", [])) >= 2


def cited(reply: dict, documents: dict[str, int], k: int = 8) -> list[int]:
    return [documents[s["uri"]] for s in (reply.get("sources") or [])[:k] if s["uri"] in documents]


async def test_ppr_reaches_both_passages_and_every_item_resolves_to_its_document(stack):
    api, question, documents = stack
    supporting = set(question["supporting"])

    messages = [m async for m in api.stream("default", "search", {"query": question["question"], "strategies": ["ppr"]})]
    search = messages[-1]
    assert supporting <= set(cited(search, documents)), search.get("sources")
    assert all(is_knowledge(Triple.model_validate(e["triple"])) for e in search["evidence"]), "metadata as evidence"
    focus = next(m["explain_id"] for m in messages if (m.get("explain_id") or "").startswith("urn:trustgraph:prov:focus:"))
    rows = (await api.flow_service("default", "sparql", {"query": RESOLVES % focus}))["bindings"]
    assert rows and all("doc" in row for row in rows), f"a selected edge does not resolve to a document: {rows}"

    graph = await api.flow_service("default", "graph-rag", {"query": question["question"]})
    assert supporting <= set(cited(graph, documents)), graph.get("sources")
    documents_rag = await api.flow_service("default", "document-rag", {"query": question["question"], "doc-limit": 8})
    assert supporting <= set(cited(documents_rag, documents)), documents_rag.get("sources")

