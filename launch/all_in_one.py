"""`tg-launch`: every processor of the default stack in one process, on the embedded defaults."""

from __future__ import annotations

import argparse
import asyncio
import logging

from tracegraph.base.settings import add_gateway_arguments, add_runtime_arguments, settings_from
from tracegraph.base.usage import ArgumentParser, usage_error
from tracegraph.base.bus.protocol import Backend
from tracegraph.flow.gateway.app import check_port_free
from tracegraph.launch.process import configure_logging, run_main, serve, until_signalled
from tracegraph.launch.registry import PROCESSORS
from tracegraph.launch.stack import Stack, ensure_flow

log = logging.getLogger("tg-launch")


def parser() -> argparse.ArgumentParser:
    p = ArgumentParser(
        prog="tg-launch",
        description="Run the whole TraceGraph stack in one process: the config service, the gateway and "
                    "every flow processor, on the in-process bus with stores under --data-dir. "
                    "Stop it with Ctrl-C.")
    add_runtime_arguments(p)
    add_gateway_arguments(p)
    p.add_argument("--processors", default=",".join(PROCESSORS),
                   help=f"comma-separated processors to run [{','.join(PROCESSORS)}]")
    p.add_argument("--flow", default="default",
                   help="flow id to have running, started from the blueprint of the same name if absent "
                        "[default]; pass '' to start none")
    return p


def main(argv: list[str] | None = None) -> int:
    p = parser()
    args = p.parse_args(argv)
    settings = settings_from(args, p)
    names = [n.strip() for n in args.processors.split(",") if n.strip()]
    unknown = [n for n in names if n not in PROCESSORS]
    if unknown:
        usage_error(p, f"--processors: unknown {', '.join(map(repr, unknown))}; choose from {', '.join(PROCESSORS)}")
    configure_logging(settings)

    async def run(backend: Backend) -> None:
        async with Stack(backend, settings, names) as stack:
            if args.flow and "config" in names:
                await ensure_flow(backend, args.flow, args.flow)
                await stack.joined(args.flow)
            log.info("running %s; data in %s; Ctrl-C stops", ", ".join(names), settings.data_dir.resolve())
            await until_signalled()
            log.info("stopping %d processor(s)", len(stack.processors))

    async def body() -> int:
        if "gateway" in names:  # a taken port is one line now, not a traceback once every model has loaded
            await asyncio.to_thread(check_port_free, settings.gateway_host, settings.gateway_port)
        return await serve(settings, run)

    return run_main("tg-launch", body)


if __name__ == "__main__":
    raise SystemExit(main())
