"""Pulsar and Cassandra for the test session: use the one configured, else start one with servers/start.

Their suites run when TG_PULSAR_URL / TG_CASSANDRA_HOSTS name a server, or when TG_START_SERVERS=1 or
TG_REQUIRE_PULSAR=1 / TG_REQUIRE_CASSANDRA=1 ask for one. Like RabbitMQ in tests/conftest.py, a server
that already answers is used as it is; a missing one on the default loopback address is started once
per session (and left running for the next session; `servers/stop NAME` ends it). With TG_REQUIRE_*=1
a server that cannot be had fails the tests instead of skipping them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

SERVERS = Path(__file__).resolve().parents[2] / "servers"
sys.path.append(str(SERVERS))  # servers/ is scripts, not a package: its helpers are shared from there
from jvm_process import port_open  # noqa: E402
START_TIMEOUT = 900  # the first start also resolves the jars from Maven Central

PULSAR_DEFAULT_URL = "pulsar://127.0.0.1:6650"
CASSANDRA_DEFAULT_HOSTS = "127.0.0.1"
CASSANDRA_PORT = 9042

# Read at import: the autouse clean_environ fixture removes every TG_* variable before each test.
PULSAR_URL = os.environ.get("TG_PULSAR_URL", "")
CASSANDRA_HOSTS = os.environ.get("TG_CASSANDRA_HOSTS", "")
START_SERVERS = os.environ.get("TG_START_SERVERS") == "1"
REQUIRE_PULSAR = os.environ.get("TG_REQUIRE_PULSAR") == "1"
REQUIRE_CASSANDRA = os.environ.get("TG_REQUIRE_CASSANDRA") == "1"


STARTED: list[str] = []  # what servers/start said this session (address, start-up time, memory)


def write_started_summary(terminal) -> None:
    """A section at the end of the run naming the servers this session started, as servers/start put it."""
    if STARTED:
        terminal.section("servers started for this session (servers/start)")
        for line in STARTED:
            terminal.write_line(line)


@dataclass(frozen=True)
class Wanted:
    """One server a session asks for: where, whether servers/start may provide it, and whether it must."""

    name: str
    host: str
    port: int
    startable: bool  # the default loopback address, and the session asked for servers
    required: bool

    @property
    def skip_reason(self) -> str | None:
        """Why the suite does not run at all this session (checked at collection), or None."""
        variable = "TG_PULSAR_URL" if self.name == "pulsar" else "TG_CASSANDRA_HOSTS"
        if self.startable or self.required or self.host:
            return None
        return f"{variable} not set"


def _loopback(host: str) -> bool:
    return host in ("127.0.0.1", "localhost")


def wanted_pulsar() -> Wanted:
    asked = START_SERVERS or REQUIRE_PULSAR
    host, port = pulsar_address(PULSAR_URL or PULSAR_DEFAULT_URL) if (PULSAR_URL or asked) else ("", 0)
    return Wanted("pulsar", host, port, asked and _loopback(host) and port == 6650, REQUIRE_PULSAR)


def wanted_cassandra() -> Wanted:
    asked = START_SERVERS or REQUIRE_CASSANDRA
    host, port = cassandra_address(CASSANDRA_HOSTS or CASSANDRA_DEFAULT_HOSTS) if (CASSANDRA_HOSTS or asked) \
        else ("", 0)
    return Wanted("cassandra", host, port, asked and _loopback(host) and port == CASSANDRA_PORT, REQUIRE_CASSANDRA)


def pulsar_address(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    return parts.hostname or "127.0.0.1", parts.port or 6650


def cassandra_address(hosts: str) -> tuple[str, int]:
    """The first contact point of a comma-separated TG_CASSANDRA_HOSTS (`host` or `host:port`)."""
    first = hosts.split(",")[0].strip()
    host, _, port = first.partition(":")
    return host or "127.0.0.1", int(port or CASSANDRA_PORT)


def can_start() -> str | None:
    """None when this machine can run servers/start, else what is missing."""
    missing = [tool for tool in ("java", "mvn") if shutil.which(tool) is None]
    if not (SERVERS / "start").exists():
        missing.append(str(SERVERS / "start"))
    return f"missing {', '.join(missing)}" if missing else None


def start_with_script(name: str) -> str | None:
    """Run `servers/start NAME`; None when the server is up, else why it is not."""
    try:
        done = subprocess.run([str(SERVERS / "start"), name], capture_output=True, text=True,
                              timeout=START_TIMEOUT, check=False)
    except subprocess.TimeoutExpired:
        return f"servers/start {name} took over {START_TIMEOUT} s"
    STARTED.extend(done.stdout.strip().splitlines())
    if done.returncode != 0:
        return f"servers/start {name} failed: {(done.stderr or done.stdout).strip()[-2000:]}"
    return None


def availability(wanted: Wanted) -> str | None:
    """None when the server answers (started here when allowed and local), else the reason to skip or fail."""
    where = f"{wanted.host}:{wanted.port}"
    if port_open(wanted.host, wanted.port):
        return None
    if not wanted.startable:
        return f"no {wanted.name} at {where} (set TG_START_SERVERS=1 to start one there with servers/start)"
    blocker = can_start()
    if blocker:
        return f"no {wanted.name} at {where} and servers/start cannot run: {blocker}"
    failure = start_with_script(wanted.name)
    if failure:
        return failure
    return None if port_open(wanted.host, wanted.port) else f"{wanted.name} started but {where} does not answer"
