"""Fault benchmark: how long a caller waits for its error when the service it asks is dead, and how
long the gateway takes to refuse hostile input. Prints figures beside the aims; never asserts on time.

Each processor runs as its own process on RabbitMQ (a vhost of its own), as a cluster runs them:
the config service and `ping`. The ping process is asked, killed with SIGKILL, and asked again.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from tracegraph.base.bus import codec
from tracegraph.base.bus.rabbitmq import RabbitMQBackend
from tracegraph.base.bus.topic import request_topic, response_topic
from tracegraph.base.client import RequestClient
from tracegraph.base.errors import ServiceUnavailable
from tracegraph.base.settings import RuntimeSettings
from tracegraph.flow.gateway.limits import parse_json
from tracegraph.flow.gateway.refusals import GatewayError
from tracegraph.launch.stack import ensure_flow
from tracegraph.schemas.base import Ping, Pong
from tracegraph.schemas.retrieval import GraphRagRequest

BIN = Path(sys.executable).parent
FLOW = "faults"
AIM_SECONDS = 5.0


def vhost(base_url: str) -> tuple[str, str]:
    """A vhost of our own (so nothing else consumes our requests) and its URL."""
    name = f"tg-bench-faults-{uuid.uuid4().hex[:8]}"
    for args in (["add_vhost", name], ["set_permissions", "-p", name, "guest", ".*", ".*", ".*"]):
        subprocess.run(["rabbitmqctl", *args], check=True, capture_output=True, timeout=60)
    return name, f"{base_url.rstrip('/')}/{name}"


def processor(name: str, url: str, data: Path, log: Path) -> subprocess.Popen:
    return subprocess.Popen([str(BIN / "tg-processor"), name, "--pubsub", "rabbitmq", "--pubsub-url", url,
                             "--data-dir", str(data)], stdout=log.open("a"), stderr=subprocess.STDOUT)


async def time_to_error(client: RequestClient[Ping, Pong]) -> tuple[float, str]:
    began = time.monotonic()
    try:
        await client.request(Ping(text="anyone?"))
    except ServiceUnavailable as exc:
        return time.monotonic() - began, "unavailable"
    except Exception as exc:  # a figure, not a failure: say what came back
        return time.monotonic() - began, type(exc).__name__
    return time.monotonic() - began, "answered"


async def dead_service(url: str, work: Path, unavailable_after: float) -> list[tuple[str, float, str]]:
    config = processor("config", url, work, work / "config.log")
    ping = processor("ping", url, work, work / "ping.log")
    rows = []
    try:
        async with RabbitMQBackend(url) as bus:
            await ensure_flow(bus, FLOW, "default")
            async with RequestClient(bus, request_topic("ping", FLOW), response_topic("ping", FLOW), Ping, Pong,
                                     unavailable_after=unavailable_after) as client:
                for _ in range(300):  # until the ping process has joined the flow
                    try:
                        await client.request(Ping(text="ready?"), timeout=1)
                        break
                    except Exception:
                        await asyncio.sleep(0.2)
                ping.send_signal(signal.SIGKILL)
                ping.wait()
                rows.append(("ping killed with SIGKILL, then asked", *await time_to_error(client)))
            never = f"never-{uuid.uuid4().hex[:6]}"
            async with RequestClient(bus, request_topic(never, FLOW), response_topic(never, FLOW), Ping, Pong,
                                     unavailable_after=unavailable_after) as client:
                rows.append(("a service that never ran, asked", *await time_to_error(client)))
    finally:
        for proc in (ping, config):
            if proc.poll() is None:
                proc.terminate()
                proc.wait(20)
    return rows


def refusal_seconds(body: bytes, decode: bool = False) -> float:
    """Seconds to refuse `body`: the gateway's pre-parse checks, or the bus codec for a processor."""
    began = time.perf_counter()
    try:
        if decode:
            codec.decode(body, {"schema": GraphRagRequest.schema_name}, GraphRagRequest)
        else:
            GraphRagRequest.model_validate(parse_json(body))
    except (GatewayError, ValueError, Exception):
        return time.perf_counter() - began
    raise AssertionError("the body was accepted")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0], epilog=f"aim: an error within "
                                f"{AIM_SECONDS:g} s of asking a dead service, with the default TG_UNAVAILABLE_TIMEOUT")
    p.add_argument("--rabbitmq-url", default=os.environ.get("TG_RABBITMQ_URL", "amqp://guest:guest@127.0.0.1:5672/"),
                   help="broker (a vhost of its own is made under it, then deleted) [TG_RABBITMQ_URL]")
    default = RuntimeSettings.model_fields["unavailable_timeout"].default
    p.add_argument("--unavailable-timeout", type=float, default=default,
                   help=f"the callers' TG_UNAVAILABLE_TIMEOUT [{default:g}, the default]")
    args = p.parse_args()

    print("gateway and codec refusals (one run each)")
    five_mb = json.dumps({"query": "x" * 5_000_000}).encode()
    for label, body, decode in [("100,000 nested [ at the gateway", b"[" * 100_000, False),
                                ("5 MB question at the gateway", five_mb, False),
                                ("5 MB question arriving over the bus", five_mb, True)]:
        print(f"  {label:<48} {refusal_seconds(body, decode) * 1000:8.1f} ms")

    name, url = vhost(args.rabbitmq_url)
    try:
        with tempfile.TemporaryDirectory() as folder:
            rows = asyncio.run(dead_service(url, Path(folder), args.unavailable_timeout))
    finally:
        subprocess.run(["rabbitmqctl", "delete_vhost", name], capture_output=True, timeout=60)
    print(f"a dead service, on RabbitMQ (unavailable timeout {args.unavailable_timeout:g} s; aim <= {AIM_SECONDS:g} s)")
    for label, seconds, outcome in rows:
        verdict = "met" if outcome == "unavailable" and seconds <= AIM_SECONDS else "SHORT"
        print(f"  {label:<48} {seconds:6.2f} s  {outcome:<12} {verdict}")


if __name__ == "__main__":
    main()
