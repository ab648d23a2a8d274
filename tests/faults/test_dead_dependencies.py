"""A dead dependency, or a broker gone away, is noticed by every caller within the unavailable timeout,
with every processor its own process on RabbitMQ.

Before: callers queued behind a live GraphRAG whose triples service had died waited one unavailable
timeout per prefetch-full of requests ahead of them (8.8 s at 4.5 s), and while the broker was away the
gateway answered 503 only once its publish gave up waiting for the reconnect (15.3 s)."""

from __future__ import annotations

import asyncio
import time

import aiohttp
import pytest

from support.broker_proxy import BrokerProxy
from support.cluster import Cluster

pytestmark = [pytest.mark.rabbitmq, pytest.mark.faults, pytest.mark.timeout(240)]

UNAVAILABLE_AFTER = 2.0  # seconds: TG_UNAVAILABLE_TIMEOUT of the processes
BOUND = 2 * UNAVAILABLE_AFTER + 3.0  # generous: what "within the unavailable timeout" may cost on a loaded machine
QUEUED = 48  # six times graph-rag's prefetch of 8: without the fix the last waited six timeouts
SETTINGS = {"TG_UNAVAILABLE_TIMEOUT": str(UNAVAILABLE_AFTER), "TG_REQUEST_TIMEOUT": "60"}


async def timed_post(session: aiohttp.ClientSession, url: str, body: dict) -> tuple[int, float, dict, str | None]:
    """(HTTP status, seconds to the answer, JSON body, Retry-After header) of one POST."""
    began = time.monotonic()
    async with session.post(url, json=body) as response:
        reply = await response.json(content_type=None)
        return response.status, time.monotonic() - began, reply, response.headers.get("Retry-After")


def assert_prompt_503s(answers: list[tuple[int, float, dict, str | None]]) -> None:
    slow = [round(seconds, 1) for _, seconds, _, _ in answers if seconds > BOUND]
    assert not slow, f"{len(slow)} of {len(answers)} callers waited over {BOUND:g}s: {sorted(slow)[-5:]}"
    for status, _, reply, retry in answers:
        assert status == 503 and reply["error"]["type"] == "unavailable", (status, reply)
        assert retry is not None and int(retry) >= 1, retry


async def test_requests_queued_behind_a_service_whose_dependency_died_all_fail_promptly(rabbitmq_url, tmp_path):
    cluster = Cluster(rabbitmq_url, tmp_path / "data", tmp_path / "logs", users=1, **SETTINGS)
    try:
        await cluster.start_all(["config", "triples", "graph-rag", "gateway"])
        await cluster.kill("triples")  # every question asks the triples service first whether its collection exists
        await asyncio.sleep(0.5)  # the broker counts the killed consumer gone
        url = f"{cluster.gateway}api/v1/flow/default/service/graph-rag"
        headers = {"Authorization": f"Bearer {cluster.tokens['user0']}"}
        async with aiohttp.ClientSession(headers=headers, timeout=aiohttp.ClientTimeout(total=60)) as session:
            answers = await asyncio.gather(*(
                timed_post(session, url, {"query": f"Who owns service {n}?", "collection": "c"})
                for n in range(QUEUED)))
        assert_prompt_503s(answers)
    finally:
        await cluster.stop_all()


async def test_the_gateway_answers_503_promptly_while_the_broker_is_away(rabbitmq_url, tmp_path):
    # The broker is taken away from these processes only, through a relay: the shared broker stays up.
    proxy = BrokerProxy(rabbitmq_url).start()
    cluster = Cluster(proxy.proxied_url, tmp_path / "data", tmp_path / "logs", users=1, **SETTINGS)
    try:
        await cluster.start_all(["config", "gateway"])
        url = f"{cluster.gateway}api/v1/config"
        headers = {"Authorization": f"Bearer {cluster.tokens['admin']}"}
        listing = {"operation": "list", "type": "flow"}
        async with aiohttp.ClientSession(headers=headers, timeout=aiohttp.ClientTimeout(total=60)) as session:
            status, _, reply, _ = await timed_post(session, url, listing)
            assert status == 200, reply
            proxy.cut()
            answers = [await timed_post(session, url, listing) for _ in range(3)]  # one after another
            answers += await asyncio.gather(*(timed_post(session, url, listing) for _ in range(8)))  # and at once
            assert_prompt_503s(answers)
            proxy.restore()
            deadline = time.monotonic() + 90
            while (status := (await timed_post(session, url, listing))[0]) != 200 and time.monotonic() < deadline:
                await asyncio.sleep(0.5)
            assert status == 200, "the gateway answers again once the broker is back"
    finally:
        proxy.restore()  # lets the processes stop cleanly
        await cluster.stop_all()
        proxy.close()
