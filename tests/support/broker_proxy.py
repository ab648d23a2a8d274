"""A TCP relay in front of the broker, so a test can take the broker away from its own processes only:
the shared RabbitMQ (and every other test on it) keeps running. The relay has a thread and event loop of
its own: a test's blocking call (a `tg-*` command run to completion) must not stall the processes' traffic."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Coroutine
from typing import Any
from urllib.parse import urlsplit, urlunsplit


class BrokerProxy:
    """Relays 127.0.0.1:`port` to the broker of `url`. `cut()` drops every relayed connection and refuses
    new ones, as a broker that went away does; `restore()` listens on the same port again. Its methods
    are plain calls that return once the relay has done it."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self.url = url
        self.upstream = (parts.hostname or "127.0.0.1", parts.port or 5672)
        self.port = 0
        self._server: asyncio.Server | None = None
        self._links: set[asyncio.StreamWriter] = set()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="broker-proxy", daemon=True)
        self._thread.start()

    def _run(self, work: Coroutine[Any, Any, None]) -> None:
        asyncio.run_coroutine_threadsafe(work, self._loop).result(timeout=30)

    @property
    def proxied_url(self) -> str:
        """`url` with its host and port replaced by the relay's."""
        parts = urlsplit(self.url)
        credentials = parts.netloc.rpartition("@")[0]
        netloc = f"{credentials}@127.0.0.1:{self.port}" if credentials else f"127.0.0.1:{self.port}"
        return urlunsplit(parts._replace(netloc=netloc))

    def start(self) -> "BrokerProxy":
        self._run(self._listen())
        return self

    async def _listen(self) -> None:
        self._server = await asyncio.start_server(self._relay, "127.0.0.1", self.port)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _relay(self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        try:
            broker_reader, broker_writer = await asyncio.open_connection(*self.upstream)
        except OSError:
            client_writer.close()
            return
        self._links |= {client_writer, broker_writer}
        await asyncio.gather(_pipe(client_reader, broker_writer), _pipe(broker_reader, client_writer))
        self._links -= {client_writer, broker_writer}

    def cut(self) -> None:
        """The broker is away: nothing relayed, nothing accepted."""
        self._run(self._cut())

    async def _cut(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None
        for writer in list(self._links):
            writer.transport.abort()
        self._links.clear()

    def restore(self) -> None:
        """Accept connections again (nothing to do unless cut)."""
        if self._server is None:
            self.start()

    def close(self) -> None:
        self.cut()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(OSError, ConnectionError):
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    writer.transport.abort()
