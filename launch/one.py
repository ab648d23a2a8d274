"""`tg-processor NAME`: one processor as its own long-running process, for scale-out deployments.

Run N copies of a slow processor against a real broker: they share one subscription per
topic, so the broker spreads the work and redelivers what a crashed copy held.
"""

from __future__ import annotations

import argparse
import logging
import textwrap

from tracegraph.base.settings import BROKERS, add_gateway_arguments, add_runtime_arguments, settings_from
from tracegraph.base.usage import ArgumentParser, usage_error
from tracegraph.base.bus.protocol import Backend
from tracegraph.launch.process import configure_logging, run_main, serve, until_signalled
from tracegraph.launch.registry import DESCRIPTIONS, PROCESSORS, processor_factory

log = logging.getLogger("tg-processor")


def parser() -> argparse.ArgumentParser:
    p = ArgumentParser(
        prog="tg-processor",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Run one processor as its own process. It needs a broker every process shares\n"
                    "(--pubsub rabbitmq or pulsar, and --pubsub-url): the in-process bus cannot reach\n"
                    "other processes. To run them all in one process, use tg-launch.",
        epilog=processor_list() + "\n\nexample: tg-processor ping --pubsub rabbitmq "
                                  "--pubsub-url amqp://guest:guest@127.0.0.1:5672/")
    p.add_argument("name", metavar="NAME", choices=sorted(PROCESSORS), help="the processor to run (listed below)")
    add_runtime_arguments(p, buses=BROKERS)
    add_gateway_arguments(p)
    return p


def processor_list() -> str:
    """Every processor `NAME` may be, each with what it does."""
    width = max(map(len, PROCESSORS))
    return "processors:\n" + "\n".join(
        textwrap.fill(DESCRIPTIONS[name], 79, initial_indent=f"  {name:<{width}}  ", subsequent_indent=" " * (width + 4),
                      break_on_hyphens=False)
        for name in PROCESSORS)


def main(argv: list[str] | None = None) -> int:
    p = parser()
    args = p.parse_args(argv)
    settings = settings_from(args, p)
    if settings.pubsub not in BROKERS:  # TG_PUBSUB unset or inproc: the flag's choices cannot catch it
        usage_error(p, "--pubsub: tg-processor needs a broker the other processes share, not the in-process "
                       "bus: pass --pubsub rabbitmq (or pulsar) and --pubsub-url, or use tg-launch")
    configure_logging(settings)

    async def run(backend: Backend) -> None:
        async with processor_factory(args.name)(backend, settings):
            await until_signalled()

    async def body() -> int:
        return await serve(settings, run)

    return run_main("tg-processor", body)


if __name__ == "__main__":
    raise SystemExit(main())
