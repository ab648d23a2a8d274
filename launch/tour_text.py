"""How `tg-demo` names what it shows, so it reads like a guided tour: a trace step by its name rather
than its IRI (`[grounding]`), an agent's explain event by what it records, a listing in aligned columns."""

from __future__ import annotations

import re

_STEP_HEADER = re.compile(r"^(\s*\[[\w -]+\]) urn:\S+$")
_AGENT_EVENT = re.compile(r"^urn:trustgraph:agent:[^/]+(?:/(?:i(\d+)|(final)))?$")


def step_header(line: str) -> str:
    """A rendered step's first line without the step's IRI: the trace is named once, after its steps.

    >>> step_header("[grounding] urn:trustgraph:prov:grounding:b282")
    '[grounding]'
    >>> step_header("    Concepts: Helios Grid")
    '    Concepts: Helios Grid'
    """
    found = _STEP_HEADER.match(line)
    return found.group(1) if found else line


def agent_event(explain_id: str) -> str | None:
    """What an agent's explain event records, by its IRI; None for one that is not the agent's own (a
    tool's GraphRAG run, whose steps the agent relays).

    >>> agent_event("urn:trustgraph:agent:80e7"), agent_event("urn:trustgraph:agent:80e7/i2")
    ('the question', 'step 2: thought, action and observation')
    >>> agent_event("urn:trustgraph:agent:80e7/final"), agent_event("urn:trustgraph:prov:focus:1")
    ('the conclusion', None)
    """
    found = _AGENT_EVENT.match(explain_id)
    if not found:
        return None
    if found.group(1):
        return f"step {found.group(1)}: thought, action and observation"
    return "the conclusion" if found.group(2) else "the question"


def trace_pointer(trace_id: str) -> str:
    """The line naming a trace after its steps: the command that prints it whole."""
    return f"  (the whole trace: tg-show-explain-trace {trace_id})"


def columns(rows: list[tuple[str, ...]], gap: str = "  ") -> list[str]:
    """Rows of cells padded to one width per column (the last column left as it is); a cell starting with
    a digit is aligned right, as numbers are.

    >>> columns([("CODEOWNERS", "1,120 bytes", "→ a"), ("helios-grid.md", "808 bytes", "→ b")])
    ['CODEOWNERS      1,120 bytes  → a', 'helios-grid.md    808 bytes  → b']
    """
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)] if rows else []
    out = []
    for row in rows:
        cells = [cell.rjust(width) if cell[:1].isdigit() else cell.ljust(width) for cell, width in zip(row, widths)]
        out.append(gap.join([*cells, row[-1]]))
    return out
