"""RabbitMQ under failure: a consumer process killed mid-message, and a dropped broker connection."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tracegraph.base.bus.rabbitmq import RabbitMQBackend
from tracegraph.base.bus.topic import Topic

from support.names import unique, vhost_of

pytestmark = [pytest.mark.rabbitmq, pytest.mark.timeout(120)]
SUPPORT = Path(__file__).resolve().parents[1] / "support"


async def _readline(proc: asyncio.subprocess.Process, timeout: float = 20) -> str:
    return (await asyncio.wait_for(proc.stdout.readline(), timeout)).decode().strip()


async def test_message_held_by_a_killed_process_is_redelivered(rabbitmq_url):
    topic = Topic.parse(f"persistent://tg/flow/{unique('kill')}:default")
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(SUPPORT / "hold_one.py"), rabbitmq_url, str(topic), "workers",
        stdout=asyncio.subprocess.PIPE, cwd=SUPPORT.parent)
    try:
        assert await _readline(proc) == "ready"
        async with RabbitMQBackend(rabbitmq_url) as bus:
            await bus.publish(topic, b"do-not-lose-me", {})
            assert await _readline(proc) == "holding do-not-lose-me"
            proc.kill()  # SIGKILL: no chance to settle or close cleanly
            await proc.wait()
            async with bus.subscribe(topic, "workers", prefetch=1) as deliveries:
                delivery = await asyncio.wait_for(anext(aiter(deliveries)), 20)
                await delivery.ack()
        assert delivery.body == b"do-not-lose-me"
        assert delivery.attempt >= 2
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


@pytest.mark.skipif(not shutil.which("rabbitmqctl"), reason="needs rabbitmqctl to drop connections")
async def test_consumer_and_publisher_recover_after_the_connection_drops(rabbitmq_url):
    topic = Topic.parse(f"persistent://tg/flow/{unique('reconnect')}:default")
    async with RabbitMQBackend(rabbitmq_url) as bus:
        async with bus.subscribe(topic, "survivor") as deliveries:
            await bus.publish(topic, b"before", {})
            first = await asyncio.wait_for(anext(aiter(deliveries)), 10)
            await first.ack()
            await asyncio.to_thread(subprocess.run, ["rabbitmqctl", "close_all_connections", "-p", vhost_of(rabbitmq_url), "test"],
                                    check=True, capture_output=True, timeout=60)
            received = None
            for _ in range(60):  # the robust connection reconnects within a few seconds
                try:
                    await bus.publish(topic, b"after", {})
                    received = await asyncio.wait_for(anext(aiter(deliveries)), 1)
                    break
                except Exception:
                    await asyncio.sleep(0.5)
            assert received is not None, "no delivery after the connection came back"
            await received.ack()
    assert first.body == b"before" and received.body == b"after"
