"""The multiplexed WebSocket: upstream framing, concurrency, bad frames, limits, disconnects, auth."""

from __future__ import annotations

import json

import aiohttp
import pytest

from tracegraph.cli.api import Api
from tracegraph.cli.socket_client import SocketClient, socket_url
from tracegraph.base.errors import RemoteError

from support.ingest import CORPUS, ingest_stack, load_and_wait
from support.stack import wait_until_async

pytestmark = pytest.mark.timeout(180)

QUESTION = {"query": "What does Helios Grid depend on?", "streaming": True}


class RawSocket:
    """A bare WebSocket to the gateway, for frames the Python client would never send."""

    def __init__(self, port: int) -> None:
        self.url = socket_url(f"http://127.0.0.1:{port}/")

    async def __aenter__(self) -> "RawSocket":
        self.session = aiohttp.ClientSession()
        self.ws = await self.session.ws_connect(self.url)
        return self

    async def __aexit__(self, *exc) -> None:
        await self.ws.close()
        await self.session.close()

    async def send(self, frame) -> None:
        await (self.ws.send_str(frame) if isinstance(frame, str) else self.ws.send_json(frame))

    async def receive(self) -> dict:
        return await self.ws.receive_json(timeout=30)

    async def until_complete(self, request_id: str) -> list[dict]:
        frames = []
        while not frames or not frames[-1].get("complete"):
            frame = await self.receive()
            if frame.get("id") == request_id:
                frames.append(frame)
        return frames


def gateway_port(stack) -> int:
    return stack["gateway"].port


async def test_streams_and_short_requests_share_one_socket(tmp_path):
    async with ingest_stack(tmp_path) as (api, stack):
        await load_and_wait(api, CORPUS / "helios-grid.md")  # GraphRAG refuses an empty collection
        async with RawSocket(gateway_port(stack)) as raw:
            await raw.send({"type": "auth", "token": ""})
            assert await raw.receive() == {"type": "auth-ok", "default_workspace": "default"}
            await raw.send({"id": "rag", "service": "graph-rag", "flow": "default", "request": QUESTION})
            for n in range(5):
                await raw.send({"id": f"ping-{n}", "service": "ping", "flow": "default", "request": {"seq": n}})
            await raw.send({"id": "flows", "service": "flow", "request": {"operation": "list-flows"}})
            frames: dict[str, list[dict]] = {}
            while len([f for f in frames.values() if f[-1]["complete"]]) < 7:
                frame = await raw.receive()
                frames.setdefault(frame["id"], []).append(frame)

        rag = frames.pop("rag")
        assert [f["complete"] for f in rag] == [False] * (len(rag) - 1) + [True]
        types = [f["response"]["message_type"] for f in rag]
        assert types[:4] == ["explain"] * 4 and types[-1] == "chunk" and rag[-1]["response"]["end_of_session"]
        assert "error" not in json.dumps(rag)  # upstream clients choke on even a null error key
        assert frames.pop("flows")[0]["response"]["flow-ids"] == ["default"]
        assert sorted(f[0]["response"]["seq"] for f in frames.values()) == [0, 1, 2, 3, 4]


async def test_bad_frames_get_error_frames_and_the_socket_carries_on(tmp_path):
    async with ingest_stack(tmp_path) as (_api, stack):
        async with RawSocket(gateway_port(stack)) as raw:
            await raw.send({"type": "auth", "token": ""})
            await raw.receive()
            cases = [
                ("{not json", None, "bad-request", "not valid JSON"),
                ("[1, 2]", None, "bad-request", "JSON object"),
                ({"service": "ping", "request": {}}, None, "bad-request", "string 'id'"),
                ({"id": "a", "flow": "default", "request": {}}, "a", "bad-request", "'service' and 'request'"),
                ({"id": "b", "service": "nope", "flow": "default", "request": {}}, "b", "unknown-service", "nope"),
                ({"id": "c", "service": "ping", "flow": "nope", "request": {}}, "c", "unknown-flow", "no running flow"),
                ({"id": "d", "service": "graph-rag", "flow": "default", "request": {"query": 3}}, "d", "bad-request",
                 "query"),
                ({"id": "e", "service": "graph-rag", "flow": "default", "request": "text"}, "e", "bad-request",
                 "JSON object"),
                ({"id": "f", "service": "sparql", "flow": "default", "request": {"query": "SELEC nonsense"}}, "f",
                 None, "SPARQL"),
                ({"id": "g", "service": "nope", "request": {}}, "g", "unknown-service", "config"),
            ]
            for frame, request_id, type_, words in cases:
                await raw.send(frame)
                reply = await raw.receive()
                assert reply["id"] == request_id and reply["complete"] is True, (frame, reply)
                error = reply.get("error") or reply["response"]["error"]
                assert (type_ is None or error["type"] == type_) and words in error["message"], (frame, reply)
            await raw.ws.send_bytes(b"\x00\x01")
            assert "binary" in (await raw.receive())["error"]["message"]

            await raw.send({"id": "ok", "service": "ping", "flow": "default", "request": {"text": "still here"}})
            assert (await raw.until_complete("ok"))[-1]["response"]["text"].endswith("still here")


async def test_outstanding_requests_per_socket_are_bounded(tmp_path):
    async with ingest_stack(tmp_path, gateway_max_outstanding=2) as (api, stack):
        await load_and_wait(api, CORPUS / "helios-grid.md")  # GraphRAG refuses an empty collection
        async with RawSocket(gateway_port(stack)) as raw:
            await raw.send({"type": "auth", "token": ""})
            await raw.receive()
            for n in range(3):
                await raw.send({"id": f"q{n}", "service": "graph-rag", "flow": "default", "request": QUESTION})
            refused = None
            done = set()
            while len(done) < 3:
                frame = await raw.receive()
                if frame.get("complete"):
                    done.add(frame["id"])
                    if "error" in frame:
                        refused = frame
            assert refused["id"] == "q2" and refused["error"]["type"] == "too-many-requests"
            # Capacity comes back once requests finish.
            await raw.send({"id": "later", "service": "ping", "flow": "default", "request": {}})
            assert "error" not in (await raw.until_complete("later"))[-1]


async def test_client_leaving_mid_stream_leaves_gateway_and_processors_serving(tmp_path):
    async with ingest_stack(tmp_path) as (api, stack):
        await load_and_wait(api, CORPUS / "helios-grid.md")  # GraphRAG refuses an empty collection
        port = gateway_port(stack)
        async with RawSocket(port) as raw:
            await raw.send({"type": "auth", "token": ""})
            await raw.receive()
            await raw.send({"id": "gone", "service": "graph-rag", "flow": "default", "request": QUESTION})
            first = await raw.receive()
            assert first["complete"] is False
        # The socket closed with the stream half read: the gateway forgets the request …
        rag_client = stack["gateway"]._clients[("default", "graph-rag")]
        await wait_until_async(lambda: not rag_client._pending, what="the gateway to drop the request")
        # … and everything still answers on a new connection.
        async with SocketClient(f"http://127.0.0.1:{port}/") as client:
            frames = [r async for r in client.stream("graph-rag", QUESTION, flow="default")]
        assert frames[-1]["end_of_session"] is True


async def test_tokens_are_checked_in_band_and_bind_the_user(tmp_path):
    tokens = tmp_path / "tokens"
    tokens.write_text("alice alice-token admin\nbob bob-token\n")
    async with ingest_stack(tmp_path, gateway_tokens=tokens) as (_api, stack):
        port = gateway_port(stack)
        async with RawSocket(port) as raw:
            await raw.send({"id": "early", "service": "ping", "flow": "default", "request": {}})
            assert await raw.receive() == {"id": "early", "complete": True,
                                           "error": {"type": "auth-required", "message": "auth failure"}}
            await raw.send({"type": "auth", "token": "wrong"})
            assert (await raw.receive())["type"] == "auth-failed"
            await raw.send({"type": "auth", "token": "bob-token"})  # the socket stays usable after a failure
            assert await raw.receive() == {"type": "auth-ok", "default_workspace": "bob"}
            await raw.send({"id": "x", "workspace": "alice", "service": "triples", "flow": "default",
                            "request": {"limit": 1}})
            assert (await raw.receive())["error"]["type"] == "access-denied"
            await raw.send({"id": "y", "service": "flow", "request": {"operation": "stop-flow", "flow-id": "default"}})
            reply = await raw.receive()
            assert reply["error"]["type"] == "access-denied" and "admin" in reply["error"]["message"]

        with pytest.raises(RemoteError, match="auth-failed"):
            async with SocketClient(f"http://127.0.0.1:{port}/", token="nobody"):
                pass
        async with aiohttp.ClientSession() as session:
            async with session.post(f"http://127.0.0.1:{port}/api/v1/flow", json={"operation": "list-flows"}) as r:
                assert r.status == 401 and (await r.json()) == {"error": "auth failure"}
            async with session.get(f"http://127.0.0.1:{port}/api/v1/health") as r:
                assert r.status == 200 and (await r.json())["auth"] is True
        alice = Api(f"http://127.0.0.1:{port}/", token="alice-token")
        assert (await alice.flow("list-flows"))["flow-ids"] == ["default"]
        with pytest.raises(RemoteError, match="access-denied"):
            await Api(f"http://127.0.0.1:{port}/", token="bob-token").flow("stop-flow", flow_id="default")


async def test_openapi_document_describes_every_route(tmp_path):
    async with ingest_stack(tmp_path) as (_api, stack):
        async with aiohttp.ClientSession() as session:
            async with session.get(f"http://127.0.0.1:{gateway_port(stack)}/api/v1/openapi.json") as r:
                spec = await r.json()
    assert spec["openapi"].startswith("3.1")
    assert {"/api/v1/flow", "/api/v1/librarian", "/api/v1/flow/{flow}/service/graph-rag",
            "/api/v1/flow/{flow}/import/triples-bulk"} <= set(spec["paths"])
    rag = spec["components"]["schemas"]["GraphRagRequest"]
    assert rag["required"] == ["query"] and "entity-limit" in rag["properties"]
