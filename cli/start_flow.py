"""`tg-start-flow`: start a flow from a blueprint; processors in it join within moments."""

from __future__ import annotations

from tracegraph.base.errors import ConfigError
from tracegraph.cli._client import command_parser, run
from tracegraph.cli.api import Api


def parse_parameters(pairs: list[str]) -> dict[str, str]:
    """`["chunk-size=1000"]` -> `{"chunk-size": "1000"}`.

    >>> parse_parameters(["a=1", "b=x=y"])
    {'a': '1', 'b': 'x=y'}
    """
    out = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise ConfigError(f"parameter {pair!r} is not NAME=VALUE")
        out[name] = value
    return out


def main(argv: list[str] | None = None) -> int:
    p = command_parser("tg-start-flow", "Start a flow from a blueprint (see tg-show-flow-blueprints).")
    p.add_argument("-n", "--blueprint-name", required=True, help="blueprint to start from")
    p.add_argument("-i", "--flow-id", required=True, help="id of the new flow (letters, digits, . _ -)")
    p.add_argument("-d", "--description", help="free text shown by tg-show-flows")
    p.add_argument("-p", "--param", action="append", default=[], metavar="NAME=VALUE",
                   help="a blueprint parameter; repeat for several")
    args = p.parse_args(argv)

    async def body(api: Api) -> None:
        await api.flow("start-flow", flow_id=args.flow_id, blueprint_name=args.blueprint_name,
                       description=args.description, parameters=parse_parameters(args.param) or None)
        print(f"flow {args.flow_id!r} started from blueprint {args.blueprint_name!r}")

    return run("tg-start-flow", args, body)
