"""Upstream's `trustgraph-cli`, installed in a venv of its own, run against our gateway.

TG_UPSTREAM_CLI names that venv's bin/ (`.ci/run` builds `.upstream-venv`); tests using it skip
without it. Read at import: the autouse `clean_environ` fixture removes TG_* before each test.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

UPSTREAM = os.environ.get("TG_UPSTREAM_CLI")

needs_upstream = pytest.mark.skipif(not UPSTREAM, reason="TG_UPSTREAM_CLI is not set (a venv with trustgraph-cli)")


async def upstream(command: str, *args: str) -> tuple[int, str, str]:
    """Run one upstream command to completion: (exit status, stdout, stderr)."""
    binary = Path(UPSTREAM) / command
    assert binary.exists(), f"{binary} is missing: TG_UPSTREAM_CLI must be a venv bin/ with trustgraph-cli"
    process = await asyncio.create_subprocess_exec(str(binary), *args, stdout=asyncio.subprocess.PIPE,
                                                   stderr=asyncio.subprocess.PIPE,
                                                   env={"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/")})
    out, err = await asyncio.wait_for(process.communicate(), 120)
    return process.returncode, out.decode(), err.decode()
