"""A gateway that dies mid-stream: every streaming command says so in one `tg-…: error:` line and exits 1,
with no traceback. A stand-in gateway starts each streamed answer, then drops the connection."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator

import pytest
from aiohttp import web

from support.procs import tg_async
from support.local_http import served

pytestmark = pytest.mark.timeout(120)

COMMANDS = [
    ("tg-invoke-graph-rag", "--streaming", "-x"),
    ("tg-invoke-document-rag", "--streaming"),
    ("tg-invoke-agent", "-v"),
    ("tg-search",),
]


@contextlib.asynccontextmanager
async def dropping_gateway(lines_before_drop: int) -> AsyncIterator[str]:
    """A gateway whose streamed answers send `lines_before_drop` NDJSON lines, then cut the connection."""
    async def answer(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "application/x-ndjson"})
        await response.prepare(request)
        for _ in range(lines_before_drop):
            await response.write(json.dumps({"message_type": "chunk", "response": "Helios Grid depends "}).encode()
                                 + b"\n")
        assert request.transport is not None
        request.transport.abort()  # the gateway process died: no final chunk, a reset connection
        return response

    app = web.Application()
    app.router.add_post("/api/v1/flow/{flow}/service/{kind}", answer)
    async with served(app) as url:
        yield f"{url}/"


@pytest.mark.parametrize("command", COMMANDS, ids=[c[0] for c in COMMANDS])
async def test_a_stream_cut_mid_answer_is_one_error_line(command):
    async with dropping_gateway(lines_before_drop=1) as url:
        code, out, err = await tg_async(command[0], "-u", url, *command[1:], "-q", "What does Helios Grid depend on?")
    assert code == 1, err
    assert "Traceback" not in out + err
    assert err.splitlines()[-1].startswith(
        f"{command[0]}: error: gateway connection lost mid-answer; the trace may be incomplete ("), err
    assert err.count("\n") == 1, err


async def test_a_stream_cut_before_any_answer_says_so():
    async with dropping_gateway(lines_before_drop=0) as url:
        code, out, err = await tg_async("tg-invoke-graph-rag", "-u", url, "--streaming", "-q", "What does Helios depend on?")
    assert (code, out) == (1, "")
    assert err.startswith("tg-invoke-graph-rag: error: gateway connection lost before graph-rag answered (") \
        and err.count("\n") == 1, err
