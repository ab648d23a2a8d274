"""Shared fixtures: a clean TG_* environment, blocking-call detection, and bus backends to run suites on."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import AsyncIterator, Callable

import pytest
from blockbuster import blockbuster_ctx

from tracegraph.base.bus.protocol import Backend
from tracegraph.base.bus.registry import create_backend

# Import broker libraries now: a first import inside a test would read files on the event loop.
import tracegraph.base.bus.rabbitmq  # noqa: E402,F401
import tracegraph.base.bus.pulsar  # noqa: E402,F401
from tracegraph.launch.registry import PROCESSORS, processor_factory  # noqa: E402
from support.skips import write_skip_summary  # noqa: E402
from support.servers import (Wanted, availability, port_open, wanted_cassandra, wanted_pulsar,  # noqa: E402
                             write_started_summary)

for _name in PROCESSORS:  # every processor module and the libraries it imports
    processor_factory(_name)

RABBITMQ_URL = os.environ.get("TG_RABBITMQ_URL", "amqp://guest:guest@127.0.0.1:5672/")
PULSAR_URL = os.environ.get("TG_PULSAR_URL")
PULSAR = wanted_pulsar()  # TG_PULSAR_URL, TG_START_SERVERS, TG_REQUIRE_PULSAR (see tests/support/servers.py)
CASSANDRA_HOSTS = os.environ.get("TG_CASSANDRA_HOSTS")
CASSANDRA = wanted_cassandra()  # TG_CASSANDRA_HOSTS, TG_START_SERVERS, TG_REQUIRE_CASSANDRA
REQUIRE_RABBITMQ = os.environ.get("TG_REQUIRE_RABBITMQ") == "1"


def pytest_terminal_summary(terminalreporter) -> None:
    """Say at the end of every run what was skipped and why: a missing browser or broker is no silent pass."""
    write_skip_summary(terminalreporter)
    write_started_summary(terminalreporter)


@pytest.fixture(autouse=True)
def clean_environ(monkeypatch: pytest.MonkeyPatch) -> None:
    """No TG_* setting leaks from the shell or from one test into another."""
    for name in list(os.environ):
        if name.startswith("TG_"):
            monkeypatch.delenv(name)
    # kg-extract parses in a thread: a worker process per started stack would cost each test seconds of
    # spaCy loading. tests/integration/test_extract_workers.py runs the worker processes themselves.
    monkeypatch.setenv("TG_EXTRACT_WORKERS", "0")


@pytest.fixture(autouse=True)
def blockbuster(request: pytest.FixtureRequest):
    """Fail an async test that makes a blocking call on the event loop."""
    if not request.node.get_closest_marker("asyncio") and not _is_coroutine_test(request):
        yield None
        return
    # Only calls made (at any depth) from our own package count; fixtures may block freely.
    with blockbuster_ctx([f"tracegraph.{layer}" for layer in ("base", "flow", "launch", "cli", "schemas")]) as bb:
        for func in ("io.TextIOWrapper.write", "io.BufferedWriter.write"):  # logging to stderr
            if func in bb.functions:
                bb.functions[func].deactivate()
        yield bb


def _is_coroutine_test(request: pytest.FixtureRequest) -> bool:
    import inspect
    return inspect.iscoroutinefunction(getattr(request, "function", None))


@pytest.fixture(scope="session")
def rabbitmq_url() -> str:
    """A reachable RabbitMQ; started with `rabbitmq-server -detached` if it is local and down.

    On a local broker each test session gets a vhost of its own (deleted at the end), so sessions
    that run at once (a developer's and CI's, say) never consume each other's requests."""
    if not port_open("127.0.0.1", 5672) and "127.0.0.1" in RABBITMQ_URL and shutil.which("rabbitmq-server"):
        subprocess.run(["rabbitmq-server", "-detached"], check=False, capture_output=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not port_open("127.0.0.1", 5672):
            time.sleep(0.5)
    host = RABBITMQ_URL.split("@")[-1].split("/")[0]
    name, _, port = host.partition(":")
    if not port_open(name, int(port or 5672)):
        if REQUIRE_RABBITMQ:
            pytest.fail(f"RabbitMQ required (TG_REQUIRE_RABBITMQ=1) but {host} is unreachable")
        pytest.skip(f"no RabbitMQ at {host}; set TG_RABBITMQ_URL or start rabbitmq-server")
    url, vhost = RABBITMQ_URL, None
    if shutil.which("rabbitmqctl") and "TG_RABBITMQ_URL" not in os.environ:
        vhost = f"tg-test-{os.getpid()}"
        made = _rabbitmqctl("add_vhost", vhost)
        if made.returncode == 0 and _rabbitmqctl("set_permissions", "-p", vhost, "guest", ".*", ".*", ".*").returncode == 0:
            url = f"{RABBITMQ_URL.rstrip('/')}/{vhost}"
        else:
            vhost = None
    if shutil.which("rabbitmqctl"):
        # Durable queues that tests leave behind expire once unused for 30 s.
        _rabbitmqctl("set_policy", *(("-p", vhost) if vhost else ()), "--apply-to", "queues", "tg-test-expiry",
                     "-test-", '{"expires":30000}')
    yield url
    if vhost:
        _rabbitmqctl("delete_vhost", vhost)


def _server_or_skip(wanted: Wanted) -> None:
    """Start the server if the session asked for it; skip without it, or fail when TG_REQUIRE_* says so."""
    reason = availability(wanted)
    if reason and wanted.required:
        pytest.fail(f"{wanted.name} required (TG_REQUIRE_{wanted.name.upper()}=1) but {reason}")
    if reason:
        pytest.skip(reason)


@pytest.fixture(scope="session")
def pulsar_url() -> str:
    """A reachable Pulsar broker: TG_PULSAR_URL, or a standalone started by servers/start."""
    _server_or_skip(PULSAR)
    return PULSAR_URL or f"pulsar://{PULSAR.host}:{PULSAR.port}"


@pytest.fixture(scope="session")
def cassandra_hosts() -> str:
    """Reachable Cassandra contact points: TG_CASSANDRA_HOSTS, or a node started by servers/start."""
    _server_or_skip(CASSANDRA)
    return CASSANDRA_HOSTS or CASSANDRA.host


def _rabbitmqctl(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["rabbitmqctl", *args], check=False, capture_output=True, timeout=60)


BACKENDS = [
    "inproc",
    pytest.param("rabbitmq", marks=pytest.mark.rabbitmq),
    pytest.param("pulsar", marks=[pytest.mark.pulsar,
                                  pytest.mark.skipif(bool(PULSAR.skip_reason), reason=str(PULSAR.skip_reason))]),
]


@pytest.fixture(params=BACKENDS)
def backend_name(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
async def connect(backend_name: str, request: pytest.FixtureRequest) -> AsyncIterator[Callable[[], Backend]]:
    """Returns a factory of connected backends: separate connections on a real broker, one hub in-process."""
    url = None
    if backend_name == "rabbitmq":
        url = request.getfixturevalue("rabbitmq_url")
    elif backend_name == "pulsar":
        url = request.getfixturevalue("pulsar_url")
    opened: list[Backend] = []
    shared: Backend | None = None

    async def factory() -> Backend:
        nonlocal shared
        if backend_name == "inproc":
            if shared is None:
                shared = create_backend("inproc")
                opened.append(shared)
            return shared
        backend = create_backend(backend_name, url)
        await backend.connect()
        opened.append(backend)
        return backend

    yield factory
    for backend in reversed(opened):
        await backend.aclose()
