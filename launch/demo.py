"""`tg-demo`: the README's main job — start the embedded stack, drive it through the gateway as a
user would, print what happened, and stop. No server, broker or API key needed."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import time

from tracegraph.base.settings import RuntimeSettings, add_runtime_arguments, settings_from
from tracegraph.cli.api import Api
from tracegraph.base.bus.protocol import Backend
from tracegraph.launch.process import configure_logging, run_main, serve
from tracegraph.launch.registry import PROCESSORS
from tracegraph.launch.stack import Stack


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tg-demo", description=(
        "Start every processor in this process on the embedded defaults, exercise the flow API "
        "through the HTTP gateway, print the results and exit."))
    add_runtime_arguments(p)
    p.add_argument("--pings", type=int, default=200, help="round trips to time through the gateway [200]")
    return p


async def demo(api: Api, pings: int) -> None:
    blueprints = (await api.flow("list-blueprints"))["blueprint-names"]
    print(f"blueprints: {', '.join(blueprints)}")
    flows = (await api.flow("list-flows")).get("flow-ids", [])
    if "demo" not in flows:
        await api.flow("start-flow", flow_id="demo", blueprint_name="default", description="tg-demo flow")
        print("started flow 'demo' from blueprint 'default'")
    record = json.loads((await api.flow("get-flow", flow_id="demo"))["flow"])
    print(f"flow 'demo' interfaces: {', '.join(sorted(record['interfaces']))}")
    reply = await _first_ping(api)
    print(f"ping through gateway -> bus -> ping processor: {reply['text']!r}")
    started = time.perf_counter()
    for seq in range(pings):
        await api.flow_service("demo", "ping", {"text": "x", "seq": seq})
    elapsed = time.perf_counter() - started
    print(f"{pings} HTTP round trips in {elapsed:.2f}s ({pings / elapsed:.0f}/s, one at a time)")
    await api.flow("stop-flow", flow_id="demo")
    print(f"stopped flow 'demo'; flows still running: {(await api.flow('list-flows')).get('flow-ids') or 'none'}")


async def _first_ping(api: Api) -> dict:
    """The ping processor joins a new flow within moments of the config push; wait for that."""
    deadline = time.monotonic() + 10
    while True:
        try:
            return await api.flow_service("demo", "ping", {"text": "hello"})
        except Exception:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.05)




def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    base = settings_from(args)
    settings = RuntimeSettings(**{**base.model_dump(), "gateway_port": 0, "gateway_host": "127.0.0.1"})
    configure_logging(RuntimeSettings(**{**settings.model_dump(), "log_level": "WARNING"})
                      if args.log_level is None else settings)
    logging.getLogger("tg-demo").info("data directory %s", settings.data_dir)

    async def run(backend: Backend) -> None:
        async with Stack(backend, settings, list(PROCESSORS)) as stack:
            port = stack["gateway"].port
            print(f"TraceGraph stack up: {', '.join(p.name for p in stack.processors)} "
                  f"on the {settings.pubsub} bus; gateway http://127.0.0.1:{port}/; data in {settings.data_dir}")
            await demo(Api(f"http://127.0.0.1:{port}/"), args.pings)
        print("done")

    return run_main("tg-demo", lambda: serve(settings, run))


if __name__ == "__main__":
    raise SystemExit(main())
