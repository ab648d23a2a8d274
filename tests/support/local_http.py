"""An aiohttp application served on a free loopback port for the length of a test: stand-ins for an
admin API, a reranker endpoint or a gateway that misbehaves on purpose."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from aiohttp import web


@contextlib.asynccontextmanager
async def served(app: web.Application) -> AsyncIterator[str]:
    """Yields the app's base URL (`http://127.0.0.1:PORT`, no trailing slash); stops it afterwards."""
    runner = web.AppRunner(app, handle_signals=False, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        yield f"http://127.0.0.1:{runner.addresses[0][1]}"
    finally:
        await runner.cleanup()
