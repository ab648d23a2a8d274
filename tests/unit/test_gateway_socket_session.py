"""A WebSocket client that stops reading is cut off after the send timeout, and its requests dropped."""

import asyncio

from tracegraph.flow.gateway.auth import Authenticator
from tracegraph.flow.gateway.socket import SocketSession


class StalledSocket:
    """Accepts the first frame, then blocks every send as a client that no longer reads would."""

    def __init__(self) -> None:
        self.sent: list[str] = []
        self.closed = False
        self.close_code: int | None = None

    async def send_str(self, text: str) -> None:
        if self.sent:
            await asyncio.Event().wait()  # never set: the peer's window is full
        self.sent.append(text)

    async def close(self, code: int, message: bytes) -> None:
        self.closed, self.close_code = True, code


class Dispatcher:
    """Streams responses forever, so only the client's reading limits the flow."""

    async def stream(self, *args):
        from tracegraph.schemas.base import Pong
        n = 0
        while True:
            n += 1
            yield Pong(text="x" * 100, seq=n)


async def test_a_client_that_stops_reading_is_disconnected_after_the_send_timeout():
    ws = StalledSocket()
    session = SocketSession(ws, Dispatcher(), Authenticator(None), max_outstanding=4, send_timeout=0.2)
    await session._on_text('{"id": "r1", "service": "ping", "flow": "default", "request": {}}')
    task = session.requests["r1"]
    await asyncio.wait_for(asyncio.gather(task, return_exceptions=True), 5)
    assert ws.closed and ws.close_code == 1008
    assert len(ws.sent) == 1  # one frame went out; nothing piled up behind the stalled one
    assert "r1" not in session.requests
