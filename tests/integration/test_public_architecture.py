"""Extraction on real architecture documents nobody on the project wrote: a few files of the public corpus
(../shared/data/architecture, read in place, never copied into the project) loaded with `tg-load-text`
under their repository paths, then asked through the routes and `tg-search` as a user would. Skipped
when the corpus is not on this machine (set TG_ARCHITECTURE_DATA to its folder)."""

from __future__ import annotations

import asyncio
import os
import re
from pathlib import Path

import pytest

from tracegraph.base.provenance.shacl import validate_trace
from tracegraph.cli.api import Api
from tracegraph.schemas.rdf import Triple

from support.ingest import ingest_stack
from support.procs import tg_async
from support.stack import wait_until_async

pytestmark = pytest.mark.timeout(600)


def corpus() -> Path | None:
    """The corpus folder: TG_ARCHITECTURE_DATA, else ../shared/data/architecture beside the repository."""
    here = Path(__file__).resolve().parents[2]
    for candidate in (os.environ.get("TG_ARCHITECTURE_DATA"), here.parent / "shared/data/architecture",
                      Path("/work/shared/data/architecture")):
        if candidate and (Path(candidate) / "gold.json").is_file():
            return Path(candidate)
    return None


DATA = corpus()
# (file in the corpus, the path it has in its own repository)
FILES = (
    ("opentelemetry-demo/.github/CODEOWNERS", ".github/CODEOWNERS"),
    ("opentelemetry.io/content/en/docs/demo/architecture.md", "content/en/docs/demo/architecture.md"),
    ("opentelemetry.io/content/en/docs/demo/services/checkout.md", "content/en/docs/demo/services/checkout.md"),
    ("govuk-infrastructure/docs/architecture/decisions/0014-replace-terraform-cloud.md",
     "docs/architecture/decisions/0014-replace-terraform-cloud.md"),
)
DIAGRAM = "content/en/docs/demo/architecture.md"
TG = "https://trustgraph.ai/ns/"


@pytest.fixture
async def loaded(tmp_path):
    if DATA is None:
        pytest.skip("the public architecture corpus is not on this machine (set TG_ARCHITECTURE_DATA)")
    async with ingest_stack(tmp_path) as (api, _stack):
        for file, path in FILES:
            code, out, err = await tg_async("tg-load-text", "-u", api.url, str(DATA / file), "--path", path,
                                            "--wait", timeout=300)
            assert code == 0, err
        await wait_until_async(lambda: _ruled(api), timeout=120, what="CODEOWNERS rules read")
        yield api


async def _ruled(api: Api) -> bool:
    reply = await api.get("ownership/src/checkout/main.go", {})
    return bool(reply["ownership"]["codeowners"])


async def check_ownership_of_a_path_comes_from_the_codeowners_line(loaded):
    code, out, err = await tg_async("tg-show-ownership", "-u", loaded.url, "src/checkout/main.go")
    assert code == 0, err
    assert "@open-telemetry/demo-approvers" in out, out
    assert re.search(r"\.github/CODEOWNERS.*line [45]\b", out), out


async def check_the_dependencies_of_checkout_are_the_diagram_arrows_with_their_lines(loaded):
    tree = (await loaded.get("dependencies/Checkout", {"depth": "1"}))["dependencies"]
    pairs = {(e["source-label"].lower(), e["target-label"].lower()) for e in tree["edges"]}
    expected = {"cart", "currency", "payment", "email", "product catalog", "shipping"}
    assert {("checkout", t) for t in expected} <= pairs, sorted(pairs)
    cart = next(e for e in tree["edges"] if e["target-label"].lower() == "cart")
    assert any(s["title"] == DIAGRAM and s["line"] == 49 for s in cart["sources"]), cart["sources"]

    code, out, err = await tg_async("tg-show-dependencies", "-u", loaded.url, "Checkout")
    assert code == 0, err
    assert re.search(rf"{re.escape(DIAGRAM)}, line 49\b", out), out


async def check_why_an_adr_decided_is_its_own_reason(loaded):
    code, out, err = await tg_async("tg-show-memory", "-u", loaded.url, "Terraform Cloud")
    assert code == 0, err
    assert "0014-replace-terraform-cloud.md" in out, out
    assert re.search(r"(?i)\b(why|because|context)\b", out), out


async def check_search_sources_reach_file_and_lines_and_the_trace_is_valid(loaded):
    code, out, err = await tg_async("tg-search", "-u", loaded.url, "-q", "What does the checkout service call?",
                                    "--sources")
    assert code == 0, err
    assert re.search(rf"^  {re.escape(DIAGRAM)}  <urn:trustgraph:doc:\w+>  \(lines \d+", out, re.M), out
    # Every fact, its line-placed subgraph, its phrase and the answer's trace pass the SHACL shapes.
    everything = (await loaded.flow_service("default", "triples", {"g": "*", "limit": 200000}))["response"]
    assert any(t["p"]["i"] == TG + "firstLine" for t in everything)
    report = await asyncio.to_thread(validate_trace, [Triple.model_validate(t) for t in everything])
    assert report.conforms, "\n".join(report.messages)


async def test_public_architecture_documents_answer_through_the_routes_and_search(loaded):
    """One stack for every check: loading the files is most of the time."""
    await check_ownership_of_a_path_comes_from_the_codeowners_line(loaded)
    await check_the_dependencies_of_checkout_are_the_diagram_arrows_with_their_lines(loaded)
    await check_why_an_adr_decided_is_its_own_reason(loaded)
    await check_search_sources_reach_file_and_lines_and_the_trace_is_valid(loaded)
