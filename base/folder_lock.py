"""One holder per folder: an exclusive `flock` on a file inside it, holding the holder's PID.

The embedded stores (oxigraph's RocksDB above all) take their own locks only when a collection is first
touched, so a second process on the same folder would start, join a flow, then fail deep inside a store.
Taking this lock before anything starts refuses it at once, naming the process that holds the folder.
The kernel drops a `flock` with its process, so a killed holder (even `kill -9`) leaves no stale lock.

A `flock` belongs to an open file description, so two opens in one process would refuse each other:
`folder_held` takes each folder once per process however many of its processors own it (the
all-in-one stack runs every store owner in one process).
"""

from __future__ import annotations

import asyncio
import fcntl
import os
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

from tracegraph.base.errors import ConfigError

LOCK_FILE = "tracegraph.lock"

Refusal = Callable[[Path, str], str]  # (the folder, "process 1234") -> the one-line error


class FolderInUse(ConfigError):
    """Another process holds the folder."""


class FolderLock:
    """`with FolderLock(path, refusal):` holds the folder (creating it) or raises FolderInUse with
    `refusal(folder, holder)` as its message."""

    error: type[FolderInUse] = FolderInUse

    def __init__(self, folder: Path, refusal: Refusal) -> None:
        self.folder = Path(folder)
        self.refusal = refusal
        self._fd: int | None = None

    def acquire(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.folder / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(fd)
            os.close(fd)
            raise self.error(self.refusal(self.folder.resolve(), holder)) from None
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

    def __enter__(self) -> "FolderLock":
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


_HELD: dict[Path, tuple[FolderLock, int]] = {}  # folder -> its lock and how many owners in this process share it
_HELD_GUARD = threading.Lock()


@asynccontextmanager
async def folder_held(folder: Path, refusal: Refusal) -> AsyncIterator[None]:
    """Hold `folder` for this process while the block runs: the first owner in the process locks it,
    later owners share that lock, and the last to leave releases it. The file work runs in a thread."""
    key = await asyncio.to_thread(_join, Path(folder), refusal)
    try:
        yield
    finally:
        await asyncio.to_thread(_leave, key)


def _join(folder: Path, refusal: Refusal) -> Path:
    """Take or share the lock of `folder`; its resolved path is the key to leave with."""
    key = folder.resolve()
    with _HELD_GUARD:
        lock, owners = _HELD.get(key) or (FolderLock(key, refusal), 0)
        if owners == 0:
            lock.acquire()
        _HELD[key] = (lock, owners + 1)
    return key


def _leave(key: Path) -> None:
    with _HELD_GUARD:
        lock, owners = _HELD[key]
        if owners == 1:
            del _HELD[key]
            lock.release()
        else:
            _HELD[key] = (lock, owners - 1)


def _holder(fd: int) -> str:
    """'process 1234' from the lock file; the holder writes its PID just after locking, so it may be
    missing for a moment."""
    text = os.pread(fd, 32, 0).decode(errors="replace").strip()
    return f"process {text}" if text.isdigit() else "another process"
