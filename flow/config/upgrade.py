"""Packaged blueprints that a data directory holds in an older version are upgraded at start.

A data directory keeps the blueprint text it was seeded with; processors of a newer version may
declare specs (a new client, a new consumer) that the old text gives no topic, and would refuse to
join the flow. So at start the config service replaces a stored blueprint with the packaged one
when the stored text is a packaged version it knows — the one it recorded when it seeded it
(`flow-blueprint-origin`), or one of the versions shipped before that record existed
(launch/superseded-blueprints.json) — and rebinds the flows running from it. A blueprint a user
edited is never overwritten: it is kept, with a warning that says how to replace it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping

from tracegraph.flow.config.blueprints import parse_blueprint, resolve

ORIGIN = "flow-blueprint-origin"  # config type: blueprint name -> digest of the packaged text it came from


def digest(text: str) -> str:
    """The identity of a blueprint's content, whatever its layout.

    >>> digest('{"b": 1, "a": 2}') == digest('{ "a": 2,\\n  "b": 1 }')
    True
    """
    return hashlib.sha256(json.dumps(json.loads(text), sort_keys=True).encode()).hexdigest()


def outdated(stored: str, packaged: str, origin: str | None, superseded: set[str]) -> bool:
    """True when `stored` is an older packaged version (not a user's edit) and differs from `packaged`."""
    mine = digest(stored)
    return mine != digest(packaged) and (mine == origin or mine in superseded)


def rebind(name: str, text: str, flows: Mapping[str, str], active: Mapping[str, str]
           ) -> tuple[dict[str, str], dict[str, str | None]]:
    """Every flow running from blueprint `name`, bound anew to its `text` with its own parameters:
    (flow id -> new flow record, processor -> its new per-flow bindings, None when it has none left)."""
    blueprint = parse_blueprint(text)
    records: dict[str, str] = {}
    bindings: dict[str, dict] = {}
    for flow_id, record_text in flows.items():
        record = json.loads(record_text)
        if record.get("blueprint-name") == name:
            bindings[flow_id], interfaces = resolve(blueprint, flow_id, record.get("parameters") or {})
            records[flow_id] = json.dumps({**record, "interfaces": interfaces})
    processors: dict[str, str | None] = {}
    for processor in sorted(set(active) | {p for b in bindings.values() for p in b}):
        bound = {f: b for f, b in json.loads(active.get(processor, "{}")).items() if f not in records}
        bound |= {f: b[processor] for f, b in bindings.items() if processor in b}
        processors[processor] = json.dumps(bound, sort_keys=True) if bound else None
    return records, processors
