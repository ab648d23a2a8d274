"""Every processor as its own OS process on one RabbitMQ vhost, as a cluster deployment runs them,
so that tests can kill, stop and restart any one of them."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import time
from pathlib import Path

from support.procs import BIN, free_port, tg

# What ingest, GraphRAG and its explain trace need; config first, the gateway last.
PROCESSES = ["config", "librarian", "triples", "keyword-index", "embeddings", "graph-embeddings",
             "document-embeddings", "text-completion", "kg-extract", "chunker", "architecture-extract", "graph-rag",
             "explainability", "community", "raptor", "gateway"]
JOINED = "joined flow 'default'"
OUTSIDE_FLOWS = {"config", "librarian"}  # services on fixed topics: started is ready


class Cluster:
    """The processes of `PROCESSES`, each logging to its own file under `logs`."""

    def __init__(self, url: str, data_dir: Path, logs: Path, users: int = 16, pubsub: str = "rabbitmq",
                 **settings: str) -> None:
        self.url, self.data_dir, self.logs, self.pubsub = url, data_dir, logs, pubsub
        self.port = free_port()
        self.gateway = f"http://127.0.0.1:{self.port}/"
        # One user per scenario: the same documents, with the same ids, into a store of its own.
        self.tokens = {"admin": "admin-token", **{f"user{n}": f"token-{n}" for n in range(users)}}
        tokens_file = logs.parent / "tokens"
        logs.mkdir(parents=True, exist_ok=True)
        tokens_file.write_text("".join(f"{user} {token}{' admin' if user == 'admin' else ''}\n"
                                       for user, token in self.tokens.items()))
        self.env = {**os.environ, "TG_LOG_LEVEL": "INFO", "TG_GATEWAY_TOKENS": str(tokens_file), **settings}
        self.procs: dict[str, subprocess.Popen] = {}
        self.starts: dict[str, int] = {}

    def log_of(self, name: str) -> Path:
        return self.logs / f"{name}.log"

    def start(self, name: str) -> None:
        """Start `name`, appending to its log (a restart continues the same file)."""
        self.starts[name] = self.starts.get(name, 0) + 1
        args = [str(BIN / "tg-processor"), name, "--pubsub", self.pubsub, "--pubsub-url", self.url,
                "--data-dir", str(self.data_dir)]
        if name == "gateway":
            args += ["--gateway-port", str(self.port)]
        with self.log_of(name).open("a") as log:
            log.write(f"\n=== start {self.starts[name]} ===\n")
            log.flush()
            self.procs[name] = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, env=self.env)

    def joined(self, name: str) -> bool:
        """Has the latest start of `name` joined the default flow (or, for config, started)?"""
        text = self.log_of(name).read_text(errors="replace")
        latest = text.rsplit("=== start ", 1)[-1]
        if name in OUTSIDE_FLOWS:
            return " started " in latest
        if name == "gateway":
            return "gateway listening" in latest
        return JOINED in latest

    async def wait_joined(self, names: list[str], timeout: float = 90) -> None:
        deadline = time.monotonic() + timeout
        waiting = list(names)
        while waiting:
            waiting = [n for n in waiting if not self.joined(n)]
            for name in waiting:
                if self.procs[name].poll() is not None:
                    raise AssertionError(f"{name} exited with {self.procs[name].returncode}:\n{self.tail(name)}")
            if time.monotonic() > deadline:
                raise AssertionError(f"not joined after {timeout:g}s: {waiting}")
            await asyncio.sleep(0.2)

    async def start_all(self, names: list[str]) -> None:
        """Start every named process, the default flow once config and the gateway are up, and wait until the
        rest have joined it."""
        for name in names:
            self.start(name)
        await self.wait_joined(["config", "gateway"])
        started = tg("tg-start-flow", "-u", self.gateway, "--token", self.tokens["admin"], "-n", "default",
                     "-i", "default")
        assert started.returncode == 0 or "already running" in started.stderr, started.stderr
        await self.wait_joined([n for n in names if n not in ("config", "gateway")])

    def signal(self, name: str, sig: int) -> None:
        proc = self.procs[name]
        if proc.poll() is None:
            proc.send_signal(sig)

    async def wait_exit(self, name: str, timeout: float = 30) -> int:
        proc = self.procs[name]
        deadline = time.monotonic() + timeout
        while proc.poll() is None:
            if time.monotonic() > deadline:
                proc.kill()
            await asyncio.sleep(0.05)
        return proc.returncode

    async def kill(self, name: str) -> None:
        """SIGKILL: no chance to settle, flush or close anything."""
        self.signal(name, signal.SIGKILL)
        await self.wait_exit(name)

    async def terminate(self, name: str) -> int:
        self.signal(name, signal.SIGTERM)
        return await self.wait_exit(name)

    async def restart(self, name: str, after: float = 1.0) -> None:
        await asyncio.sleep(after)
        self.start(name)
        await self.wait_joined([name])

    def tail(self, name: str, lines: int = 40) -> str:
        return "\n".join(self.log_of(name).read_text(errors="replace").splitlines()[-lines:])

    def tracebacks(self) -> dict[str, str]:
        """Processes whose logs hold a traceback, with the lines around it."""
        found = {}
        for name in PROCESSES:
            text = self.log_of(name).read_text(errors="replace") if self.log_of(name).exists() else ""
            if "Traceback" in text:
                at = text.index("Traceback")
                found[name] = text[max(0, at - 300):at + 1500]
        return found

    async def stop_all(self) -> None:
        for name in reversed(PROCESSES):
            if name in self.procs:
                self.signal(name, signal.SIGTERM)
        for name in reversed(PROCESSES):
            if name in self.procs:
                await self.wait_exit(name, timeout=20)
