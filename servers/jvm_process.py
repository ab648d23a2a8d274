"""One server JVM as a detached process: resolve its jars with Maven, start it, wait until it answers, stop it.

Standard library only, so `servers/start` runs with any Python 3.10+ and the test fixtures can call it too.
"""

from __future__ import annotations

import fcntl
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

SERVERS = Path(__file__).resolve().parent
SETTINGS = SERVERS / "settings.xml"


@dataclass
class JvmServer:
    """What a server needs to run: its Maven project, main class, JVM options, arguments and readiness check."""

    name: str
    main_class: str
    jvm_options: list[str]
    arguments: list[str] = field(default_factory=list)
    ready: Callable[[], bool] = lambda: False
    start_timeout: float = 300.0

    @property
    def project(self) -> Path:
        return SERVERS / self.name

    @property
    def classpath_file(self) -> Path:
        return self.project / "target" / "classpath.txt"


def port_open(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


def resolve_classpath(server: JvmServer) -> str:
    """The server's classpath, asking Maven (and so Maven Central) only when the pom changed since last time."""
    pom, out = server.project / "pom.xml", server.classpath_file
    if not out.exists() or out.stat().st_mtime < pom.stat().st_mtime:
        started = time.monotonic()
        print(f"{server.name}: resolving jars with Maven (first time only) ...", file=sys.stderr, flush=True)
        subprocess.run(["mvn", "-q", "-B", "-s", str(SETTINGS), "-f", str(pom), "dependency:build-classpath",
                        f"-Dmdep.outputFile={out}"], check=True)
        print(f"{server.name}: resolved in {time.monotonic() - started:.1f} s", file=sys.stderr, flush=True)
    return out.read_text().strip()


def pid_file(data: Path) -> Path:
    return data / "server.pid"


def running_pid(data: Path) -> int | None:
    """The pid recorded in `data`, if that process is still alive."""
    try:
        pid = int(pid_file(data).read_text())
        os.kill(pid, 0)
    except (OSError, ValueError):
        return None
    return pid


@contextmanager
def start_lock(data: Path) -> Iterator[None]:
    """One start at a time per data folder: two test sessions asking at once get one server."""
    data.mkdir(parents=True, exist_ok=True)
    with open(data / "start.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def rss_mb(pid: int) -> float:
    """Resident memory of `pid` in MB, from /proc (0 where /proc is missing)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def launch(server: JvmServer, data: Path, java: str = "java") -> int:
    """Start the server detached (its own session, output to `data`/server.log) and return its pid."""
    classpath = resolve_classpath(server)
    data.mkdir(parents=True, exist_ok=True)
    command = [java, *server.jvm_options, "-cp", classpath, server.main_class, *server.arguments]
    with open(data / "server.log", "ab") as log:
        process = subprocess.Popen(command, cwd=data, stdout=log, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, start_new_session=True)
    pid_file(data).write_text(str(process.pid))
    return process.pid


def wait_ready(server: JvmServer, pid: int, data: Path) -> None:
    """Block until the server answers; raise with the log's tail if it dies or takes too long."""
    deadline = time.monotonic() + server.start_timeout
    while time.monotonic() < deadline:
        if server.ready():
            return
        try:
            finished, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:  # not our child (started by an earlier call): ask the kernel
            finished = 0 if running_pid(data) else pid
        if finished:
            raise RuntimeError(f"{server.name} exited during start-up; last log lines:\n{log_tail(data)}")
        time.sleep(1.0)
    raise RuntimeError(f"{server.name} not ready after {server.start_timeout:.0f} s; last log lines:\n"
                       f"{log_tail(data)}")


def log_tail(data: Path, lines: int = 30) -> str:
    try:
        return "\n".join((data / "server.log").read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def stop(data: Path, grace: float = 60.0) -> bool:
    """SIGTERM the server recorded in `data` (SIGKILL after `grace` s); False when none was running."""
    pid = running_pid(data)
    if pid is None:
        return False
    os.killpg(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and running_pid(data) is not None:
        _reap(pid)
        time.sleep(0.5)
    if running_pid(data) is not None:
        os.killpg(pid, signal.SIGKILL)
    pid_file(data).unlink(missing_ok=True)
    return True


def _reap(pid: int) -> None:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass
