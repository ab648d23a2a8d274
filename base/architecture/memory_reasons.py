"""A memory item's why, part by part and with its lines: a decision's context, drivers and the options it
weighed (the chosen one marked), a failure's impact, root cause and actions. Read back from the record's
fields and the line groups the extractor put them on (a subgraph's tg:firstLine–tg:lastLine), so a reader
sees which lines of the ADR or post-mortem say it. A field without lines of its own (an LLM's reading of
the whole document) comes back without them rather than with a guess."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence

from tracegraph.base.architecture.graph import text, values
from tracegraph.base.provenance.vocab import TG
from tracegraph.base.stores.protocol import SOURCE_GRAPH
from tracegraph.base.temporal.query import Rows
from tracegraph.schemas.architecture import MemoryItem, Reason
from tracegraph.schemas.rdf import Term

MAX_ROWS = 20_000
# Each field as a part of the why, in the order a reader is told them.
PARTS = {TG.rationale.iri: "context", TG.decisionDriver.iri: "driver", TG.consideredOption.iri: "option",
         TG.consequence.iri: "consequence", TG.impact.iri: "impact", TG.rootCause.iri: "root-cause",
         TG.actionItem.iri: "action-item", TG.policy.iri: "policy"}
_READ = (*PARTS, TG.chosenOption.iri, TG.summary.iri)


def reasons_query(nodes: Sequence[str]) -> str:
    """Each field value of the memory `nodes`, with the lines of the subgraph holding it, where known."""
    return (f"SELECT ?m ?p ?v ?first ?last WHERE {{ VALUES ?m {{ {values(nodes)} }} "
            f"VALUES ?p {{ {values(_READ)} }} ?m ?p ?v . OPTIONAL {{ GRAPH <{SOURCE_GRAPH}> {{ "
            f"?sg <{TG.contains.iri}> <<( ?m ?p ?v )>> ; <{TG.firstLine.iri}> ?first ; "
            f"<{TG.lastLine.iri}> ?last }} }} }}")


def _number(term: Term | None) -> int | None:
    found = text(term)
    return int(found) if found.isdigit() else None


def reasons_from(found: Sequence[Mapping[str, Term]]) -> dict[str, tuple[list[Reason], int | None]]:
    """By node: its reasons in PARTS order (by line within a part) and the last line of its text."""
    lines: dict[tuple[str, str, str], tuple[int, int] | None] = {}
    for row in found:
        key = (text(row.get("m")), text(row.get("p")), text(row.get("v")))
        first, last = _number(row.get("first")), _number(row.get("last"))
        held = lines.get(key)
        if first is not None and last is not None and (held is None or first < held[0]):
            lines[key] = (first, last)
        else:
            lines.setdefault(key, held)
    chosen = {(m, v) for m, p, v in lines if p == TG.chosenOption.iri}
    by_node: dict[str, list[Reason]] = defaultdict(list)
    told: dict[str, int | None] = {}
    for (m, p, v), span in lines.items():
        if p == TG.summary.iri:
            told[m] = span[1] if span else None
        elif p in PARTS:
            by_node[m].append(Reason(part=PARTS[p], text=v, line=span[0] if span else None,
                                     last_line=span[1] if span and span[1] != span[0] else None,
                                     chosen=(m, v) in chosen))
    order = list(dict.fromkeys(PARTS.values()))
    return {m: (sorted(by_node.get(m, []), key=lambda r: (order.index(r.part), r.line or 0, r.text)), told.get(m))
            for m in {*by_node, *told}}


async def with_reasons(rows: Rows, items: Sequence[MemoryItem]) -> list[MemoryItem]:
    """`items` with their reasons, and their source's last line where the text spans several."""
    if not items:
        return []
    found = reasons_from(await rows(reasons_query([i.node for i in items]), MAX_ROWS))
    out = []
    for item in items:
        reasons, last = found.get(item.node, ([], None))
        source = item.source
        if last is not None and source.line is not None and last > source.line:
            source = source.model_copy(update={"last_line": last})
        out.append(item.model_copy(update={"reasons": reasons, "source": source}))
    return out
