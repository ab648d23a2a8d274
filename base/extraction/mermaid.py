"""Edges of a Mermaid flowchart (```mermaid graph/flowchart```), the diagram engineers put in READMEs and
architecture pages: `checkout -->|gRPC| cart` says checkout calls cart over gRPC; a node's label (`cache[(Cache
<br/>(Valkey))]`) is its name, and a bracketed second name in it is an alias. Only flowcharts are read:
sequence and class diagrams say other things."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from dataclasses import dataclass

_HEADER = re.compile(r"^\s*(?:graph|flowchart)\b", re.IGNORECASE)
# A node: an id, optionally with a shape holding its label: id[..], id(..), id([..]), id[(..)], id((..)), id{..}…
_NODE = r"(?P<{n}>[A-Za-z0-9_][\w.-]*)(?P<{n}shape>\s*(?:\[\[.*?\]\]|\[\(.*?\)\]|\(\[.*?\]\)|\(\(.*?\)\)|\[.*?\]|\(.*?\)|\{{.*?\}}|>.*?\]))?(?::::\w+)?"
_ARROW = r"\s*(?P<arrow>(?:<)?(?:-{2,}|={2,}|-\.+-|-\.+|~{3,})(?:>|x|o)?)\s*(?:\|(?P<label>[^|]*)\|)?\s*"
_EDGE = re.compile("^\\s*" + _NODE.format(n="a") + _ARROW + _NODE.format(n="b") + r"\s*;?\s*$")
_DECLARATION = re.compile("^\\s*" + _NODE.format(n="a") + r"\s*;?\s*$")
_INLINE_LABEL = re.compile(r"^\s*(?P<a>[A-Za-z0-9_][\w.-]*)\s*--\s*(?P<label>[^->|][^>]*?)\s*-->\s*(?P<b>[A-Za-z0-9_][\w.-]*)")
_ADDRESS = re.compile(r"\s+(?:listening\s+|served\s+|reachable\s+)?(?:on|at)\s+\S*[:/]\S*$", re.IGNORECASE)
_KEYWORDS = frozenset("subgraph end classdef class style linkstyle click direction".split())


@dataclass(frozen=True, slots=True)
class Node:
    id: str
    name: str
    alias: str = ""  # "Cache (Valkey)": Valkey


@dataclass(frozen=True, slots=True)
class Edge:
    source: Node
    target: Node
    label: str  # the edge's text ("gRPC", "HTTP"), "" when it has none
    line: int  # 0-based line within the diagram
    dotted: bool = False


def is_flowchart(code: str) -> bool:
    first = next((line for line in code.splitlines() if line.strip() and not line.strip().startswith("%%")), "")
    return bool(_HEADER.match(first))


def edges(code: str) -> list[Edge]:
    """The flowchart's edges in order, each end named by its node's label (or its id)."""
    if not is_flowchart(code):
        return []
    nodes: dict[str, Node] = {}
    lines = code.splitlines()
    found: list[tuple[str, str, str, int, bool]] = []
    for number, raw in enumerate(lines):
        text = raw.split("%%", 1)[0].strip()
        if not text or _HEADER.match(text) or text.split()[0].lower() in _KEYWORDS:
            continue
        for part in re.split(r"\s*;\s*", text):
            yield_edges = list(_parse_line(part, nodes))
            for a, b, label, dotted in yield_edges:
                found.append((a, b, _label(f"[{label}]")[0] if label else "", number, dotted))
    return [Edge(nodes.get(a, Node(a, a)), nodes.get(b, Node(b, b)), label, number, dotted)
            for a, b, label, number, dotted in found]


def _parse_line(text: str, nodes: dict[str, Node]) -> Iterator[tuple[str, str, str, bool]]:
    """Edges of one statement, chained ones too (`a --> b --> c`); node shapes declare labels on the way."""
    rest = text
    while True:
        inline = _INLINE_LABEL.match(rest)
        match = _EDGE.match(rest) if not inline else None
        if inline:
            yield inline["a"], inline["b"], inline["label"].strip(), False
            return
        if match is None:
            chained = re.match("^\\s*" + _NODE.format(n="a") + _ARROW, rest)
            if chained:  # "a --> b --> c": take a --> b, then go on from b
                tail = rest[chained.end():]
                target = re.match(_NODE.format(n="a"), tail)
                if target:
                    _declare(nodes, chained["a"], chained["ashape"])
                    _declare(nodes, target["a"], target["ashape"])
                    yield chained["a"], target["a"], (chained["label"] or "").strip(), "." in chained["arrow"]
                    rest = tail
                    continue
            declared = _DECLARATION.match(rest)
            if declared:
                _declare(nodes, declared["a"], declared["ashape"])
            return
        _declare(nodes, match["a"], match["ashape"])
        _declare(nodes, match["b"], match["bshape"])
        yield match["a"], match["b"], (match["label"] or "").strip(), "." in match["arrow"]
        return


def _declare(nodes: dict[str, Node], node_id: str, shape: str | None) -> None:
    if shape and node_id not in nodes or shape and nodes[node_id].name == node_id:
        name, alias = _label(shape)
        nodes[node_id] = Node(node_id, name or node_id, alias)
    nodes.setdefault(node_id, Node(node_id, node_id))


def _label(shape: str) -> tuple[str, str]:
    """A shape's text as (name, alias): `[(Cache<br/>&#40Valkey&#41)]` → ("Cache", "Valkey")."""
    inner = shape.strip()
    while inner[:1] in "[({>/\\" and inner[-1:] in "])}/\\":
        inner = inner[1:-1].strip()
    inner = inner.strip(" \"'`/\\")
    inner = re.sub(r"&#(\d+)(?!\d|;)", lambda m: chr(int(m.group(1))), inner)  # "&#40" without its ";"
    inner = html.unescape(re.sub(r"<br\s*/?>", " ", inner, flags=re.IGNORECASE)).strip(" \"'`")
    inner = " ".join(inner.split())
    inner = _ADDRESS.sub("", inner)  # "OpenSearch listening on localhost:9200" is OpenSearch
    aside = re.fullmatch(r"(.+?)\s*\((.+)\)", inner)
    if aside:
        return aside.group(1).strip(), aside.group(2).strip()
    return inner, ""
