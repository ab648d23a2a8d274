"""The community processor's copy of a collection's graph, kept current from graph updates.

Reading the whole graph on every refresh made each refresh cost the collection's size (a bulk load ran
dozens of them). The graph is read once (first build, rebuild, reconciliation); after that a refresh
re-reads only the triples around the entities its updates name, in `around` requests of bounded size.
Each triple's role in the fact graph and its fingerprint line are worked out once, when it is read.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

from tracegraph.base.communities.graph import FactGraph, fact_graph_of_roles, role
from tracegraph.base.communities.rdf import fingerprint_line, fingerprint_of_lines
from tracegraph.schemas.rdf import IriTerm, Triple

AROUND_LIMIT = 5_000  # triples per node and direction in one `around` read; a node with more is read alone


class Reads(Protocol):
    async def match(self, s: IriTerm | None = None, p: IriTerm | None = None, o: IriTerm | None = None,
                    g: str | None = None, limit: int = 100) -> list[Triple]: ...

    async def around(self, nodes: Sequence[str], limit: int) -> list[Triple]: ...


class CollectionFacts:
    """The collection's triples, indexed by the IRIs at either end, so one entity's can be replaced."""

    def __init__(self, triples: Iterable[Triple]) -> None:
        self._triples: dict[Triple, tuple[str | None, str]] = {}  # triple -> its role, its fingerprint line
        self._by_node: dict[str, set[Triple]] = {}
        self._add(triples)

    def __len__(self) -> int:
        return len(self._triples)

    def triples(self) -> list[Triple]:
        return list(self._triples)

    def fact_graph(self) -> FactGraph:
        return fact_graph_of_roles((t, kind) for t, (kind, _) in self._triples.items())

    def fingerprint(self) -> str:
        """The same as `graph_fingerprint` of the triples."""
        return fingerprint_of_lines(line for _, line in self._triples.values())

    def replace_around(self, nodes: Iterable[str], fresh: Iterable[Triple]) -> None:
        """Drop every triple touching `nodes`, then add `fresh` (what the store now holds around them)."""
        for node in nodes:
            for triple in self._by_node.pop(node, set()):
                self._triples.pop(triple, None)
                for end in _ends(triple):
                    if end != node and end in self._by_node:
                        self._by_node[end].discard(triple)
        self._add(fresh)

    def _add(self, triples: Iterable[Triple]) -> None:
        for triple in triples:
            if triple in self._triples:
                continue
            self._triples[triple] = (role(triple), fingerprint_line(triple))
            for end in _ends(triple):
                self._by_node.setdefault(end, set()).add(triple)


async def read_around(tools: Reads, nodes: Sequence[str]) -> list[Triple]:
    """The triples whose subject or object is one of `nodes`; a node that fills the per-node limit
    (a hub) is read again on its own, without a limit that could cut its triples."""
    found = await tools.around(list(nodes), AROUND_LIMIT) if nodes else []
    outgoing: dict[str, int] = {}
    incoming: dict[str, int] = {}
    for triple in found:
        if isinstance(triple.s, IriTerm):
            outgoing[triple.s.iri] = outgoing.get(triple.s.iri, 0) + 1
        if isinstance(triple.o, IriTerm):
            incoming[triple.o.iri] = incoming.get(triple.o.iri, 0) + 1
    for node in nodes:
        if outgoing.get(node, 0) >= AROUND_LIMIT:
            found += await tools.match(s=IriTerm(iri=node), limit=1_000_000)
        if incoming.get(node, 0) >= AROUND_LIMIT:
            found += await tools.match(o=IriTerm(iri=node), limit=1_000_000)
    return found


def _ends(triple: Triple) -> tuple[str, ...]:
    return tuple(term.iri for term in (triple.s, triple.o) if isinstance(term, IriTerm))
