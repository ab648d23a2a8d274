"""`tg-show-flows`: running flows, their blueprint, parameters and service interfaces."""

from __future__ import annotations

import json

from tracegraph.cli._client import command_parser, run, table
from tracegraph.cli.api import Api


def main(argv: list[str] | None = None) -> int:
    p = command_parser("tg-show-flows", "List running flows with their blueprint, parameters and interfaces.")
    p.add_argument("--interfaces", action="store_true", help="also print each interface's topics")
    args = p.parse_args(argv)

    async def body(api: Api) -> None:
        flow_ids = (await api.flow("list-flows")).get("flow-ids", [])
        if not flow_ids:
            print("no flows running (start one with tg-start-flow)")
            return
        rows, details = [], []
        for flow_id in flow_ids:
            record = json.loads((await api.flow("get-flow", flow_id=flow_id))["flow"])
            interfaces = record.get("interfaces", {})
            params = ", ".join(f"{k}={v}" for k, v in record.get("parameters", {}).items())
            rows.append([flow_id, record.get("blueprint-name", ""), record.get("description", ""),
                         params or "-", ", ".join(sorted(interfaces))])
            details += [f"{flow_id} {name}: {json.dumps(topics)}" for name, topics in sorted(interfaces.items())]
        print(table(rows, ["id", "blueprint", "description", "parameters", "interfaces"]))
        if args.interfaces:
            print("\n" + "\n".join(details))

    return run("tg-show-flows", args, body)
