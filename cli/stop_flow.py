"""`tg-stop-flow`: stop a running flow; its processors leave it and release its subscriptions."""

from __future__ import annotations

from tracegraph.cli._client import command_parser, run
from tracegraph.cli.api import Api


def main(argv: list[str] | None = None) -> int:
    p = command_parser("tg-stop-flow", "Stop a running flow (see tg-show-flows).")
    p.add_argument("-i", "--flow-id", required=True, help="id of the flow to stop")
    args = p.parse_args(argv)

    async def body(api: Api) -> None:
        await api.flow("stop-flow", flow_id=args.flow_id)
        print(f"flow {args.flow_id!r} stopped")

    return run("tg-stop-flow", args, body)
