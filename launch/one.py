"""`tg-processor NAME`: one processor as its own long-running process, for scale-out deployments.

Run N copies of a slow processor against a real broker: they share one subscription per
topic, so the broker spreads the work and redelivers what a crashed copy held.
"""

from __future__ import annotations

import argparse
import logging

from tracegraph.base.errors import ConfigError
from tracegraph.base.settings import add_gateway_arguments, add_runtime_arguments, settings_from
from tracegraph.base.bus.protocol import Backend
from tracegraph.launch.process import configure_logging, run_main, serve, until_signalled
from tracegraph.launch.registry import PROCESSORS, processor_factory

log = logging.getLogger("tg-processor")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="tg-processor",
        description="Run one processor as its own process. Use a real broker (--pubsub rabbitmq or pulsar): "
                    "the in-process bus cannot reach other processes.",
        epilog="example: tg-processor ping --pubsub rabbitmq --pubsub-url amqp://guest:guest@127.0.0.1:5672/")
    p.add_argument("name", choices=sorted(PROCESSORS), help="the processor to run")
    add_runtime_arguments(p)
    add_gateway_arguments(p)
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    settings = settings_from(args)
    configure_logging(settings)

    async def run(backend: Backend) -> None:
        async with processor_factory(args.name)(backend, settings):
            await until_signalled()

    async def body() -> int:
        if settings.pubsub == "inproc":
            raise ConfigError("tg-processor needs a broker shared with the other processes: "
                              "pass --pubsub rabbitmq (or pulsar) and --pubsub-url, or use tg-launch")
        return await serve(settings, run)

    return run_main("tg-processor", body)


if __name__ == "__main__":
    raise SystemExit(main())
