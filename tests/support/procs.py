"""Run `tg-*` commands as a user would: console scripts from this venv, in subprocesses."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BIN = Path(sys.executable).parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tg(command: str, *args: str, env: dict | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    """Run a tg-* command to completion and return its result (never raises on exit status)."""
    return subprocess.run([str(BIN / command), *args], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})


def spawn(command: str, *args: str, env: dict | None = None) -> subprocess.Popen:
    """Start a long-running command; what it prints goes to a file (a pipe nobody reads would fill and
    block it), read back by `stop()`."""
    log = tempfile.TemporaryFile("w+")
    proc = subprocess.Popen([str(BIN / command), *args], stdout=log, stderr=subprocess.STDOUT,
                            text=True, env={**os.environ, **(env or {})})
    proc.log = log  # type: ignore[attr-defined]
    return proc


def wait_until(check, timeout: float = 30, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def stop(proc: subprocess.Popen) -> str:
    """SIGTERM, wait, and return what the process printed."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
    proc.log.seek(0)  # type: ignore[attr-defined]
    printed = proc.log.read()  # type: ignore[attr-defined]
    proc.log.close()  # type: ignore[attr-defined]
    return printed


@contextlib.contextmanager
def launched(data_dir: Path, *extra: str, env: dict | None = None, token: str | None = None):
    """`tg-launch` on the embedded defaults; yields the gateway URL once it answers."""
    port = free_port()
    launcher = spawn("tg-launch", "--data-dir", str(data_dir), "--gateway-port", str(port), *extra, env=env)
    url = f"http://127.0.0.1:{port}/"
    auth = ("--token", token) if token else ()
    try:
        wait_until(lambda: tg("tg-show-flows", "-u", url, *auth).returncode == 0, timeout=60, what="tg-launch")
        yield url
    finally:
        log = stop(launcher)
        assert "Traceback" not in log, log


async def tg_async(command: str, *args: str, env: dict | None = None, timeout: float = 120) -> tuple[int, str, str]:
    """A tg-* command run without blocking the event loop (for tests whose stack runs in this process)."""
    import asyncio
    process = await asyncio.create_subprocess_exec(str(BIN / command), *args, stdout=asyncio.subprocess.PIPE,
                                                   stderr=asyncio.subprocess.PIPE,
                                                   env={**os.environ, **(env or {})})
    out, err = await asyncio.wait_for(process.communicate(), timeout)
    return process.returncode, out.decode(), err.decode()
