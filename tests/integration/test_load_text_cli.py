"""`tg-load-text` as a user runs it against a running stack: `--kind` declares a document's kind (stored,
and shown by `tg-show-library-documents`); Ctrl-C while `--wait` follows extraction says what goes on."""

from __future__ import annotations

import asyncio
import os
import signal

import pytest

from tracegraph.flow.kg_extract.processor import KnowledgeExtractor
from support.ingest import CORPUS, ingest_stack
from support.procs import BIN, tg_async

pytestmark = pytest.mark.timeout(300)


async def test_kind_declares_the_kind_of_a_file_whose_name_tells_none(tmp_path):
    decision = tmp_path / "decision.bin"
    decision.write_bytes((CORPUS / "adr-0012-skyline-two-regions.md").read_bytes())
    async with ingest_stack(tmp_path / "data") as (api, _):
        u = ("-u", api.url)
        code, out, err = await tg_async("tg-load-text", *u, str(decision))
        assert code == 1 and err.endswith("; declare it with --kind\n") and err.count("\n") == 1, err

        code, out, err = await tg_async("tg-load-text", *u, str(decision), "--kind", "memo")
        assert code == 1 and err.startswith("tg-load-text: error: --kind 'memo' is not a kind") \
            and err.count("\n") == 1, err

        code, out, err = await tg_async("tg-load-text", *u, str(decision), "--kind", "adr")
        assert code == 0, err
        code, out, err = await tg_async("tg-show-library-documents", *u)
        assert code == 0, err
        [row] = [line for line in out.splitlines() if "decision.bin" in line]
        assert "text/x-adr" in row.split()


def _ctrl_c_as_at_a_terminal() -> None:
    """A test run started in the background (CI) ignores SIGINT, and its children inherit that; a user's
    terminal does not."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


async def test_ctrl_c_while_waiting_says_that_extraction_goes_on_in_the_server(tmp_path, monkeypatch):
    extracting = asyncio.Event()

    async def extract_until_cancelled(processor, chunk, flow) -> None:
        """Extraction held, so the wait cannot finish before Ctrl-C however fast the machine is."""
        extracting.set()
        await asyncio.Event().wait()

    monkeypatch.setattr(KnowledgeExtractor.input, "run", extract_until_cancelled)
    async with ingest_stack(tmp_path / "data") as (api, _):
        loader = await asyncio.create_subprocess_exec(
            str(BIN / "tg-load-text"), "-u", api.url, str(CORPUS / "helios-grid.md"), "--wait",
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=os.environ.copy(),
            preexec_fn=_ctrl_c_as_at_a_terminal)
        submitted = (await asyncio.wait_for(loader.stdout.readline(), 60)).decode()
        assert "→ flow default" in submitted, submitted
        await asyncio.wait_for(extracting.wait(), 60)
        loader.send_signal(signal.SIGINT)
        out, err = await asyncio.wait_for(loader.communicate(), 60)
        assert loader.returncode == 130, err
        [line] = err.decode().splitlines()
        assert line.startswith("tg-load-text: interrupted: 1 document(s) were submitted to flow default, and "
                               "extraction goes on in the server"), line
        assert "tg-show-library-documents" in line and "--wait" in line
