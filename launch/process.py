"""What every long-running entry point shares: logging, the backend's lifetime, signals, exit codes."""

from __future__ import annotations

import asyncio
import ctypes
import logging
import os
import signal
import sys
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

from tracegraph.base.bus.protocol import Backend
from tracegraph.base.bus.registry import create_backend
from tracegraph.base.errors import TraceGraphError
from tracegraph.base.settings import RuntimeSettings


T = TypeVar("T")

# glibc gives every thread that allocates a malloc arena of its own, up to 8 per core. The worker
# threads here (oxigraph and Qdrant calls, the embedding model, RocksDB's flushes) each fragment one,
# and a process answering questions grew ~15 MB per 1000 without levelling off; with two arenas it
# stays within ~5 MB (bench/soak.py). Most allocations happen under the GIL, so two cost no speed.
MALLOC_ARENAS = 2
_M_ARENA_MAX = -8  # mallopt's parameter number in glibc's malloc.h


def limit_malloc_arenas(arenas: int = MALLOC_ARENAS) -> bool:
    """Cap glibc's malloc arenas (before threads start); a MALLOC_ARENA_MAX in the environment wins.
    False where there is nothing to do: not glibc, or the variable set."""
    if "MALLOC_ARENA_MAX" in os.environ or not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    return bool(mallopt(_M_ARENA_MAX, arenas))


def configure_logging(settings: RuntimeSettings, log_file: Path | None = None) -> None:
    """Log records to stderr; with `log_file`, to that file instead, and only errors also to stderr, so
    a command whose output is the point (tg-demo) is not interleaved with the processors' warnings."""
    stderr = logging.StreamHandler(sys.stderr)
    handlers: list[logging.Handler] = [stderr]
    if log_file is not None:
        log_file.parent.mkdir(parents=True, exist_ok=True)
        stderr.setLevel(logging.ERROR)
        handlers.insert(0, logging.FileHandler(log_file, encoding="utf-8"))
    logging.basicConfig(level=settings.log_level.upper(), handlers=handlers,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    for library in BROKER_LIBRARIES:
        logging.getLogger(library).setLevel(logging.WARNING)
    for handler in logging.getLogger().handlers:  # logger filters would miss the libraries' child loggers
        handler.addFilter(one_line_broker_errors)


BROKER_LIBRARIES = ("aiormq", "aio_pika")


def one_line_broker_errors(record: logging.LogRecord) -> bool:
    """A dropped broker connection is an event the runtime recovers from (reconnect, redelivery):
    the broker libraries' report of it stays, as one line, without their traceback."""
    if record.name.startswith(BROKER_LIBRARIES) and record.exc_info and record.exc_info[1] is not None:
        exc = record.exc_info[1]
        record.msg = f"{record.getMessage()} ({type(exc).__name__}: {exc})"
        record.args = None
        record.exc_info = record.exc_text = None
    return True


async def open_backend(settings: RuntimeSettings) -> Backend:
    backend = create_backend(settings.pubsub, settings.pubsub_url)
    connect = getattr(backend, "connect", None)
    if connect is not None:
        await connect()
    return backend


async def serve(settings: RuntimeSettings, run: Callable[[Backend], Awaitable[None]]) -> int:
    """Open the configured backend, run `run(backend)` on it, and always close the backend."""
    backend = await open_backend(settings)
    try:
        await run(backend)
    finally:
        await backend.aclose()
    return 0


async def until_signalled() -> None:
    """Return on SIGINT or SIGTERM."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()


def run_loop(main: Coroutine[Any, Any, T]) -> T:
    """Run `main` on uvloop where it is installed (about 10% more messages/s), else on asyncio's loop."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(main)
    return uvloop.run(main)


def run_main(program: str, body: Callable[[], Awaitable[int | None]]) -> int:
    """Run `body`; a TraceGraphError becomes one line on stderr and exit status 1."""
    limit_malloc_arenas()
    try:
        return run_loop(body()) or 0
    except KeyboardInterrupt:
        return 130
    except (TraceGraphError, ExceptionGroup) as exc:
        print(f"{program}: error: {exc}", file=sys.stderr)
        return 1
