"""`tg-show-flow-blueprints`: the blueprints flows can be started from, with their processors."""

from __future__ import annotations

import json

from tracegraph.cli._client import command_parser, run, table
from tracegraph.cli.api import Api


def main(argv: list[str] | None = None) -> int:
    p = command_parser("tg-show-flow-blueprints", "List flow blueprints: name, description, processors, "
                       "parameters (with defaults).")
    p.add_argument("--json", action="store_true", help="print each blueprint's full JSON definition")
    args = p.parse_args(argv)

    async def body(api: Api) -> None:
        names = (await api.flow("list-blueprints")).get("blueprint-names", [])
        rows = []
        for name in names:
            text = (await api.flow("get-blueprint", blueprint_name=name))["blueprint-definition"]
            blueprint = json.loads(text)
            if args.json:
                print(f"# {name}\n{json.dumps(blueprint, indent=2)}")
                continue
            params = ", ".join(f"{k}={v.get('default', '')}" for k, v in blueprint.get("parameters", {}).items())
            rows.append([name, blueprint.get("description", ""), ", ".join(blueprint.get("processors", {})),
                         params or "-"])
        if not args.json:
            print(table(rows, ["name", "description", "processors", "parameters"]) if rows else "no blueprints")

    return run("tg-show-flow-blueprints", args, body)
