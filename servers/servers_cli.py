"""`servers/start NAME` and `servers/stop NAME`: a local Pulsar or Cassandra for tests and trials.

Start resolves the jars from Maven Central the first time (cached in ~/.m2 after), starts the server
detached on loopback, waits until it answers and prints its address, start-up time and memory.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from cassandra_node import NATIVE_PORT, cassandra_server
from jvm_process import JvmServer, launch, port_open, rss_mb, running_pid, start_lock, stop, wait_ready
from pulsar_node import BROKER_PORT, WEB_PORT, admin_url, create_tenant, pulsar_server

NAMES = ("pulsar", "cassandra")


def default_data(name: str) -> Path:
    return Path(tempfile.gettempdir()) / "tg-servers" / name


def address(name: str) -> str:
    if name == "pulsar":
        return f"pulsar://127.0.0.1:{BROKER_PORT} (admin {admin_url(WEB_PORT)})"
    return f"127.0.0.1:{NATIVE_PORT} (CQL)"


def build(name: str, data: Path, heap_mb: int | None) -> JvmServer:
    if name == "pulsar":
        return pulsar_server(data, **({"heap_mb": heap_mb} if heap_mb else {}))
    return cassandra_server(data, **({"heap_mb": heap_mb} if heap_mb else {}))


def listening(name: str) -> bool:
    return port_open("127.0.0.1", BROKER_PORT if name == "pulsar" else NATIVE_PORT)


@dataclass
class Starting:
    """A server launched and not yet answering."""

    name: str
    server: JvmServer
    pid: int
    data: Path
    since: float


def begin(name: str, data: Path, heap_mb: int | None) -> Starting | None:
    """Launch the server unless it already answers (then None)."""
    pid = running_pid(data)
    if listening(name):
        owner = f"pid {pid}, RSS {rss_mb(pid):.0f} MB" if pid else "not started by servers/start"
        print(f"{name}: already running at {address(name)} ({owner})")
        return None
    if pid is not None:
        stop(data)  # a recorded server that no longer answers: start it afresh
    server = build(name, data, heap_mb)
    since = time.monotonic()
    return Starting(name, server, launch(server, data), data, since)


def finish(starting: Starting) -> int:
    """Wait until the launched server answers and say how long it took and how much memory it holds."""
    try:
        wait_ready(starting.server, starting.pid, starting.data)
    except RuntimeError as error:
        stop(starting.data, grace=5)
        print(f"{starting.name}: failed to start: {error}", file=sys.stderr)
        return 1
    print(f"{starting.name}: ready at {address(starting.name)} in {time.monotonic() - starting.since:.1f} s, "
          f"RSS {rss_mb(starting.pid):.0f} MB, pid {starting.pid}, data {starting.data}, "
          f"log {starting.data / 'server.log'}")
    return 0


def start(names: list[str], folders: dict[str, Path], heap_mb: int | None) -> int:
    """Launch every server first, then wait for each: their start-ups overlap."""
    status = 0
    with ExitStack() as locks:
        for name in names:
            locks.enter_context(start_lock(folders[name]))
        launched = [begin(name, folders[name], heap_mb) for name in names]
        for starting in launched:
            if starting is not None:
                status |= finish(starting)
    if "pulsar" in names and listening("pulsar"):
        try:
            create_tenant()
        except RuntimeError as error:
            print(f"pulsar: {error}", file=sys.stderr)
            status = 1
    return status


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="servers", description=__doc__)
    parser.add_argument("action", choices=("start", "stop"))
    parser.add_argument("names", nargs="+", choices=NAMES, metavar="NAME", help="pulsar or cassandra")
    parser.add_argument("--data", type=Path, help="data folder (default: $TMPDIR/tg-servers/NAME); "
                                                   "with several NAMEs, one subfolder each")
    parser.add_argument("--heap", type=int, metavar="MB", help="JVM heap (default: pulsar 512, cassandra 768)")
    args = parser.parse_args(argv)
    folders = {name: (default_data(name) if args.data is None else
                      args.data / name if len(args.names) > 1 else args.data).resolve() for name in args.names}
    if args.action == "start":
        return start(args.names, folders, args.heap)
    for name in args.names:
        print(f"{name}: {'stopped' if stop(folders[name]) else 'was not running'} ({folders[name]})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
