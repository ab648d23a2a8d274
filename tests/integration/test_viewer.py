"""The live trace viewer as a person uses it, in headless Chromium against the whole in-process stack:
ask through the page, watch the trace arrive over the gateway's WebSocket, then open a step and a source."""

from __future__ import annotations

from pathlib import Path

import pytest

from tracegraph.cli.api import Api

from support.browser import browser_page, skip_unless_browser
from support.ingest import CORPUS, ingest_stack, load_and_wait
from support.stack import wait_until_async

pytestmark = pytest.mark.timeout(300)

SCREENSHOT = Path(__file__).resolve().parents[1] / "artifacts" / "viewer.png"
STEPS = ["Question", "Grounding", "Exploration", "Focus", "Synthesis"]


async def details_ready(page, uri: str) -> str:
    """Waits until the details panel shows `uri` (its own triples or the store's) and returns its text."""
    await page.wait_for_function(
        "uri => { const d = document.getElementById('details'); return d.dataset.uri === uri && d.dataset.state === 'ready'; }",
        arg=uri, timeout=30_000)
    return await page.text_content("#details")


async def ask_and_wait(page, question: str = "What does Helios Grid depend on?") -> None:
    """Ask through the form and wait until the session is over; it must have ended well."""
    await page.fill("#question", question)
    await page.click("#ask")
    await page.wait_for_selector("body[data-state=done], body[data-state=error]", timeout=120_000)
    assert await page.get_attribute("body", "data-state") == "done", await page.text_content("#status")


async def test_viewer_streams_the_trace_and_opens_steps_and_sources(tmp_path):
    skip_unless_browser()
    async with ingest_stack(tmp_path) as (api, stack):
        await load_and_wait(api, CORPUS / "helios-grid.md")
        async with browser_page() as page:
            console_errors = []  # a missing favicon shows here as "Failed to load resource … 404"
            page.on("console", lambda message: console_errors.append(message.text) if message.type == "error" else None)
            await page.goto(f"http://127.0.0.1:{stack['gateway'].port}/viewer/")
            assert await page.input_value("#collection") == "default" and await page.input_value("#flow") == "default"
            assert (await page.get_attribute("link[rel=icon]", "href")).startswith("data:image/svg+xml,")
            await ask_and_wait(page)

            # One node per explain event, in the order they arrived.
            nodes = await page.eval_on_selector_all(
                "#graph .node", "ns => ns.map(n => [n.dataset.type, n.dataset.uri])")
            assert [kind for kind, _ in nodes] == STEPS
            assert nodes[0][1].startswith("urn:trustgraph:question:")
            focus = dict(nodes)["Focus"]
            # each step → the one before, and the Exploration → the Question that generated it (as the spec draws it)
            assert await page.locator("#graph .link").count() == len(STEPS)

            answer = await page.text_content("#answer")
            assert "Helios Grid depends on Corvid Analytics" in answer

            # Selected edges hang under Focus, read through the quoted triple, with the reason attached.
            # Entity labels arrive from the store (one SPARQL query over the socket) after the Focus event.
            edges = page.locator(f'#graph .edge-node[data-focus="{focus}"] > title')
            await page.wait_for_function(
                "() => [...document.querySelectorAll('#graph .edge-node > title')]"
                ".some(t => t.textContent.startsWith('(Helios Grid) --[depends on]--> (Corvid Analytics)'))",
                timeout=30_000)
            assert await edges.count() >= 1
            assert any(text.startswith("(Helios Grid) --[depends on]--> (Corvid Analytics)\noffline selection")
                       for text in await edges.all_text_contents())

            sources = page.locator("#sources a")
            assert await sources.count() >= 1
            source = await sources.first.get_attribute("data-uri")
            assert source.startswith("urn:trustgraph:doc:") and await sources.first.text_content() == "helios-grid"

            # A step's details come from the trace itself: Focus lists its selected edges and their triples.
            await page.click('#graph .node[data-type="Focus"]')
            text = await details_ready(page, focus)
            assert "tg:selectedEdge" in text and "tg:reasoning" in text and "tg:EdgeSelection" in text
            assert "<< Helios Grid depends on Corvid Analytics >>" in text

            # A source is not in the trace: the page asks the triples service over the same socket.
            await sources.first.click()
            await details_ready(page, source)
            rows = dict(zip(await page.locator("#details th").all_text_contents(),
                            await page.locator("#details td").all_text_contents()))
            assert rows.get("dc:title") == "helios-grid" and "rdf:type" in rows, rows
            assert "from the triples service" in await page.text_content("#details")

            SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
            await page.screenshot(path=str(SCREENSHOT), full_page=True)
            assert page.script_errors == []
            assert console_errors == []
    assert SCREENSHOT.stat().st_size > 0


async def test_viewer_takes_its_token_from_the_url_and_reports_a_wrong_one(tmp_path):
    skip_unless_browser()
    async with ingest_stack(tmp_path, gateway_secret="s3cret") as (api, stack):
        await load_and_wait(Api(api.url, "s3cret"), CORPUS / "helios-grid.md")  # a collection with nothing is refused
        async with browser_page() as page:
            base = f"http://127.0.0.1:{stack['gateway'].port}/viewer/"
            await page.goto(base + "?token=wrong")
            assert await page.input_value("#token") == "wrong"
            assert "token" not in page.url  # kept out of the address bar once it is in the form
            await page.fill("#question", "What does Helios Grid depend on?")
            await page.click("#ask")
            await page.wait_for_selector("body[data-state=error]", timeout=30_000)
            assert "auth failure" in await page.text_content("#status")

            await page.fill("#token", "s3cret")
            await ask_and_wait(page)
            assert await page.locator("#graph .node").count() >= 1
            assert page.script_errors == []


async def test_viewer_draws_an_agent_session_with_its_graph_rag_run(tmp_path):
    skip_unless_browser()
    async with ingest_stack(tmp_path) as (api, stack):
        await load_and_wait(api, CORPUS / "helios-grid.md")
        async with browser_page() as page:
            await page.goto(f"http://127.0.0.1:{stack['gateway'].port}/viewer/")
            await page.select_option("#service", "agent")
            await ask_and_wait(page)
            kinds = await page.eval_on_selector_all("#graph .node", "ns => ns.map(n => n.dataset.type)")
            # The agent's Question, then the GraphRAG run its knowledge-query made, then its own steps.
            assert kinds[0] == "Question" and kinds[-1] == "Conclusion" and "Analysis" in kinds
            assert kinds.count("Question") == 2 and "Focus" in kinds
            # One box reads "Question": the GraphRAG run's Question is named as the tool's run.
            titles = await page.eval_on_selector_all("#graph .node .title", "ts => ts.map(t => t.textContent)")
            assert titles.count("Question") == 1 and titles[0] == "Question", titles
            assert titles.count("GraphRAG run") == 1, titles
            assert "Helios Grid depends on Corvid Analytics" in await page.text_content("#answer")
            # The agent's answer lists the documents its GraphRAG run rested on.
            await page.wait_for_selector("#sources[data-state=ready]", timeout=30_000)
            sources = page.locator("#sources a")
            assert "helios-grid" in await sources.all_text_contents()
            assert all(uri.startswith("urn:trustgraph:doc:") for uri in
                       await page.eval_on_selector_all("#sources a", "as => as.map(a => a.dataset.uri)"))
            assert not page.script_errors, page.script_errors
            await page.screenshot(path=str(SCREENSHOT.with_name("viewer-agent.png")), full_page=True)


async def test_viewer_shows_a_global_answer_with_its_kept_reports(tmp_path):
    skip_unless_browser()
    async with ingest_stack(tmp_path, derived_settle=0.1) as (api, stack):
        for name in ("helios-grid.md", "corvid-analytics.md"):
            await load_and_wait(api, CORPUS / name)

        async def reports_built():
            found = await api.flow_service("default", "community", {"operation": "status"})
            return found["counts"].get("reports")
        await wait_until_async(reports_built, timeout=30, what="community reports")
        async with browser_page() as page:
            await page.goto(f"http://127.0.0.1:{stack['gateway'].port}/viewer/")
            await page.select_option("#service", "search-global")
            await ask_and_wait(page, "What are the top risks across the platform?")
            subs = dict(await page.eval_on_selector_all(
                "#graph .node", "ns => ns.map(n => [n.dataset.type, n.querySelector('.sub').textContent])"))
            assert subs["Exploration"].endswith("community reports scored (map)"), subs
            assert subs["Focus"].endswith("kept (reduce)"), subs
            cards = await page.locator("#graph .edge-node > title").all_text_contents()
            assert cards and all("offline: similarity" in card for card in cards), cards
            assert "Offline answer (no LLM configured), from the community reports" in await page.text_content("#answer")
            assert page.script_errors == []


async def test_viewer_draws_the_chunks_of_a_document_rag_answer(tmp_path):
    skip_unless_browser()
    async with ingest_stack(tmp_path) as (api, stack):
        await load_and_wait(api, CORPUS / "helios-grid.md")
        async with browser_page() as page:
            await page.goto(f"http://127.0.0.1:{stack['gateway'].port}/viewer/")
            await page.select_option("#service", "document-rag")
            await ask_and_wait(page)
            kinds = await page.eval_on_selector_all("#graph .node", "ns => ns.map(n => n.dataset.type)")
            assert kinds == ["Question", "Grounding", "Exploration", "Synthesis"], kinds
            # Each retrieved chunk a card beside the Exploration, read by its label and document once looked up.
            exploration = await page.get_attribute("#graph .node[data-type=Exploration]", "data-uri")
            cards = page.locator(f'#graph .edge-node[data-focus="{exploration}"]')
            assert await cards.count() >= 1
            await page.wait_for_function(
                "() => [...document.querySelectorAll('#graph .edge-node .edge')].some(t => t.textContent.includes('→'))",
                timeout=30_000)
            texts = await page.locator("#graph .edge-node .edge").all_text_contents()
            assert any(text.startswith("Chunk 1 → helios-grid") for text in texts), texts
            assert page.script_errors == []
