"""What `tg-export-explain-trace` writes beside a trace so that the export audits on its own: each quoted
edge as a fact, with the subgraphs that contain it and their chunk (or line) → page → document records, and,
for a fact about a CODEOWNERS rule or a memory record, that record's description; each chunk
an answer used, with its records; each community report a global answer kept, with its community, the
detection run and the facts it summarises (and their provenance); each RAPTOR summary an answer kept,
with the build that wrote it. Read with pattern queries of the
triples service, which every store engine answers."""

from __future__ import annotations

import asyncio
import json

from tracegraph.cli.api import Api
from tracegraph.cli.explain_render import COMMUNITY, PROV, RAPTOR, RDF_TYPE, SOURCE, TG, objects

# A record's links to the records it needs to be valid and to be followed: up the derivation chain, to
# the activity that generated it and the agent that ran it, and from a report to its community.
FOLLOWED = frozenset({PROV + "wasDerivedFrom", PROV + "wasGeneratedBy", PROV + "wasAssociatedWith",
                      TG + "reportOf", TG + "parentCommunity"})
# Our own records that facts are stated about (a CODEOWNERS rule, a decision or incident): a quoted fact of
# one comes with the record's description and the owners a rule names, which its shapes need.
RECORD_NODES = ("urn:trustgraph:codeowners-rule:", "urn:trustgraph:memory:")
OWNER_DESCRIPTION = frozenset({RDF_TYPE, TG + "contactHandle"})
CONCURRENT = 8  # pattern queries in flight at once
RECORD_LIMIT = 100_000  # triples per record (a community lists all its members)


def quoted_edges(trace: list[dict]) -> list[dict]:
    """The triple terms the trace's EdgeSelections quote (tg:edge)."""
    return [t["o"] for t in trace if t["p"].get("i") == TG + "edge" and t["o"].get("t") == "t"]


def used_chunks(trace: list[dict]) -> list[str]:
    """The chunks a Document RAG Exploration kept (tg:selectedChunk) or a ChunkSelection names (tg:chunk)."""
    return [t["o"]["i"] for t in trace
            if t["p"].get("i") in (TG + "selectedChunk", TG + "chunk") and t["o"].get("t") == "i"]


def kept_nodes(trace: list[dict]) -> list[str]:
    """The RAPTOR summaries an answer's Focus kept (tg:selectedNode → tg:node)."""
    selections = [t["o"]["i"] for t in trace if t["p"].get("i") == TG + "selectedNode" and t["o"].get("t") == "i"]
    return [n["i"] for s in selections for n in objects(trace, s, TG + "node") if n.get("t") == "i"]


def kept_reports(trace: list[dict]) -> list[str]:
    """The community reports a global answer's Focus kept (tg:selectedReport → tg:report)."""
    selections = [t["o"]["i"] for t in trace if t["p"].get("i") == TG + "selectedReport" and t["o"].get("t") == "i"]
    return [r["i"] for s in selections for r in objects(trace, s, TG + "report") if r.get("t") == "i"]


class ProvenanceWalk:
    """Collects the records a trace points at, each fetched once, into `found` (wire triples with their graph)."""

    def __init__(self, api: Api, flow: str, collection: str) -> None:
        self.api, self.flow, self.collection = api, flow, collection
        self.found: list[dict] = []
        self._visited: set[tuple[str | None, str]] = set()
        self._edges: set[str] = set()
        self._slots = asyncio.Semaphore(CONCURRENT)

    async def _match(self, graph: str | None, **pattern) -> list[dict]:
        body = {**pattern, "collection": self.collection, "limit": RECORD_LIMIT, **({"g": graph} if graph else {})}
        async with self._slots:
            found = (await self.api.flow_service(self.flow, "triples", body)).get("response", [])
        return [{**{k: t[k] for k in ("s", "p", "o")}, **({"g": graph} if graph else {})} for t in found]

    async def trace(self, trace: list[dict]) -> None:
        """Everything the trace's edges, chunks and kept reports need."""
        await self.records(kept_reports(trace), COMMUNITY)
        reported = [t["o"] for t in self.found if t.get("g") == COMMUNITY
                    and t["p"].get("i") == PROV + "wasDerivedFrom" and t["o"].get("t") == "t"]
        await asyncio.gather(*(self.edge(e) for e in [*quoted_edges(trace), *reported]))
        await self.records(used_chunks(trace), SOURCE)
        # A kept summary with the build that wrote it; its children stay out (the overview's are the whole tree).
        await self.records(kept_nodes(trace), RAPTOR, follow=frozenset({PROV + "wasGeneratedBy"}))

    async def edge(self, edge: dict) -> None:
        """The fact itself (default graph), and the records of each subgraph that contains it."""
        key = json.dumps(edge, sort_keys=True)
        if key in self._edges:
            return
        self._edges.add(key)
        triple = edge["tr"]
        facts, holders = await asyncio.gather(
            self._match(None, s=triple["s"], p=triple["p"], o=triple["o"]),
            self._match(SOURCE, p={"t": "i", "i": TG + "contains"}, o=edge))
        self.found += facts
        await self.records([h["s"]["i"] for h in holders if h["s"].get("t") == "i"], SOURCE)
        if triple["s"].get("i", "").startswith(RECORD_NODES):
            await self.described(triple["s"]["i"])

    async def described(self, node: str) -> None:
        """A record node's own triples, and each owner it names with its type and handle."""
        if (None, node) in self._visited:
            return
        self._visited.add((None, node))
        description = await self._match(None, s={"t": "i", "i": node})
        self.found += description
        owners = [t["o"] for t in description if t["p"].get("i") == TG + "codeOwner"]
        for found in await asyncio.gather(*(self._match(None, s=owner) for owner in owners)):
            self.found += [t for t in found if t["p"].get("i") in OWNER_DESCRIPTION]

    async def records(self, nodes: list[str], graph: str, follow: frozenset[str] = FOLLOWED) -> None:
        """Each node's triples in `graph` and, breadth first, those of the nodes they link to (`follow`).
        A node the graph says nothing about is a document, described in the default graph."""
        pending = sorted({n for n in nodes if (graph, n) not in self._visited})
        while pending:
            self._visited.update((graph, n) for n in pending)
            found = await asyncio.gather(*(self._match(graph, s={"t": "i", "i": n}) for n in pending))
            described = await asyncio.gather(*(self._match(None, s={"t": "i", "i": n})
                                               for n, record in zip(pending, found) if not record))
            self.found += [t for record in [*found, *described] for t in record]
            linked = {t["o"]["i"] for record in found for t in record
                      if t["p"].get("i") in follow and t["o"].get("t") == "i"}
            pending = sorted(n for n in linked if (graph, n) not in self._visited)


async def provenance_of(api: Api, flow: str, collection: str, trace: list[dict]) -> list[dict]:
    """The records and facts `trace` points at (see the module docstring), as wire triples with their graph."""
    walk = ProvenanceWalk(api, flow, collection)
    await walk.trace(trace)
    return walk.found
