"""One stack per data folder: an exclusive `flock` on a file inside it, holding the holder's PID.

The embedded stores (oxigraph's RocksDB above all) take their own locks only when first written to, so
a second `tg-launch` on the same folder would start, accept an upload, then fail deep inside a store.
Taking this lock before anything starts refuses it at once, naming the process that holds the folder.
The kernel drops a `flock` with its process, so a killed stack (even `kill -9`) leaves no stale lock.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from tracegraph.base.errors import ConfigError

LOCK_FILE = "tracegraph.lock"


class DataDirInUse(ConfigError):
    """Another process holds the data folder."""


class DataDirLock:
    """`with DataDirLock(path):` holds the folder (creating it) or raises DataDirInUse."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = Path(data_dir)
        self._fd: int | None = None

    def acquire(self) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.data_dir / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(fd)
            os.close(fd)
            raise DataDirInUse(
                f"the data folder {self.data_dir.resolve()} is in use by {holder} (another tg-launch or tg-demo); "
                "stop it or pass another --data-dir") from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd

    def release(self) -> None:
        """Unlock; the file stays (removing it would let a third process lock a file nobody else sees)."""
        if self._fd is not None:
            os.ftruncate(self._fd, 0)
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> "DataDirLock":
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _holder(fd: int) -> str:
    """'process 1234' from the lock file; the holder writes its PID just after locking, so it may be
    missing for a moment."""
    text = os.pread(fd, 32, 0).decode(errors="replace").strip()
    return f"process {text}" if text.isdigit() else "another process"
