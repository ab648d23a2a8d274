"""`tg-show-config`: the whole configuration the config service holds, with its version."""

from __future__ import annotations

import json

from tracegraph.cli._client import command_parser, run
from tracegraph.cli.api import Api


def main(argv: list[str] | None = None) -> int:
    p = command_parser("tg-show-config", "Print the configuration (blueprints, flows, bindings) as JSON.")
    p.add_argument("-t", "--type", help="only this config type, e.g. flow or flow-blueprint")
    args = p.parse_args(argv)

    async def body(api: Api) -> None:
        response = await api.config("config")
        config = response.get("config", {})
        if args.type:
            config = {args.type: config.get(args.type, {})}
        # Values are JSON text; show them as JSON, not as escaped strings.
        shown = {t: {k: _maybe_json(v) for k, v in items.items()} for t, items in config.items()}
        print(json.dumps({"version": response.get("version"), "config": shown}, indent=2))

    return run("tg-show-config", args, body)


def _maybe_json(text: str):
    try:
        return json.loads(text)
    except ValueError:
        return text
