"""Run the whole ingest stack in-process and drive it through the gateway's Python client."""

from __future__ import annotations

import contextlib
from pathlib import Path

from tracegraph.base.bus.inproc import InprocBackend
from tracegraph.base.settings import RuntimeSettings
from tracegraph.cli.api import Api
from tracegraph.cli.library_upload import add_document, process, wait_for_extraction
from tracegraph.launch.registry import PROCESSORS
from tracegraph.launch.stack import Stack, ensure_flow

CORPUS = Path(__file__).resolve().parents[2] / "launch" / "corpus"


@contextlib.asynccontextmanager
async def ingest_stack(tmp_path: Path, backend=None, **settings):
    """(api, stack) with every processor running and the default flow started (inproc unless a backend is given)."""
    backend = backend or InprocBackend()
    config = RuntimeSettings(data_dir=tmp_path, gateway_port=0, request_timeout=30, **settings)
    try:
        async with Stack(backend, config, list(PROCESSORS)) as stack:
            await ensure_flow(backend, "default", "default")
            await stack.joined("default")
            yield Api(f"http://127.0.0.1:{stack['gateway'].port}/"), stack
    finally:
        await backend.aclose()


async def load_and_wait(api: Api, path: Path, collection: str = "default", timeout: float = 120) -> str:
    """Add + process one file, then wait until every chunk has a subgraph; returns the document id."""
    meta = await add_document(api, path, collection=collection)
    await process(api, meta["id"], "default", collection)
    await wait_for_extraction(api, "default", [meta["id"]], collection, timeout)
    return meta["id"]
