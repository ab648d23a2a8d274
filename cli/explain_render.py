"""Turning explain events into the spec's text: `[question] …`, selected edges with their reason and
`Source: Chunk → Page → Document`. Labels and source chains are looked up through the gateway."""

from __future__ import annotations

from tracegraph.base.provenance.vocab import READABLE_PREDICATES
from tracegraph.cli.api import Api

TG = "https://trustgraph.ai/ns/"
PROV = "http://www.w3.org/ns/prov#"
RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
DC_TITLE = "http://purl.org/dc/elements/1.1/title"
SOURCE = "urn:graph:source"


def step_of(explain_id: str) -> str:
    """`urn:trustgraph:prov:focus:<sid>` → "focus"; a Question → "question".

    >>> step_of("urn:trustgraph:prov:focus:1234")
    'focus'
    >>> step_of("urn:trustgraph:question:1234")
    'question'
    """
    parts = explain_id.split(":")
    return parts[2] if parts[2] != "prov" else parts[3]


def objects(triples: list[dict], subject: str, predicate: str) -> list[dict]:
    return [t["o"] for t in triples if t["s"].get("i") == subject and t["p"].get("i") == predicate]


def text(term: dict) -> str:
    return term.get("v") or term.get("i") or ""


class TraceRenderer:
    """Prints each explain event as it arrives; keeps a label cache across the session."""

    def __init__(self, api: Api, flow: str, collection: str) -> None:
        self.api, self.flow, self.collection = api, flow, collection
        self.labels: dict[str, str] = {}

    async def _match(self, **pattern) -> list[dict]:
        r = await self.api.flow_service(self.flow, "triples", {**pattern, "collection": self.collection, "limit": 5})
        return r.get("response", [])

    async def label(self, term: dict) -> str:
        if term.get("t") != "i":
            return text(term)
        iri = term["i"]
        if iri not in self.labels:
            found = await self._match(s=term, p={"t": "i", "i": RDFS_LABEL})
            self.labels[iri] = text(found[0]["o"]) if found else READABLE_PREDICATES.get(iri, iri)
        return self.labels[iri]

    async def source_chain(self, edge: dict) -> str:
        """`Chunk 1 → Page 2 → Title` for a quoted edge, from extraction provenance."""
        holders = await self._match(p={"t": "i", "i": TG + "contains"}, o=edge, g=SOURCE)
        if not holders:
            return "(no extraction provenance: the edge was imported or inferred)"
        chain, node = [], holders[0]["s"]
        for _ in range(6):
            parents = await self._match(s=node, p={"t": "i", "i": PROV + "wasDerivedFrom"}, g=SOURCE)
            if not parents:
                titles = await self._match(s=node, p={"t": "i", "i": DC_TITLE})
                chain.append(text(titles[0]["o"]) if titles else node.get("i", ""))
                break
            node = parents[0]["o"]
            labels = await self._match(s=node, p={"t": "i", "i": RDFS_LABEL}, g=SOURCE)
            if labels:
                chain.append(text(labels[0]["o"]))
        return " → ".join(chain)

    async def render(self, explain_id: str, triples: list[dict]) -> list[str]:
        step = step_of(explain_id)
        lines = [f"[{step}] {explain_id}"]
        if step == "question":
            lines += [f"    Query: {text(q)}" for q in objects(triples, explain_id, TG + "query")]
            lines += [f"    {text(c)}" for c in objects(triples, explain_id, "http://www.w3.org/2000/01/rdf-schema#comment")]
        elif step == "grounding":
            concepts = ", ".join(text(c) for c in objects(triples, explain_id, TG + "concept"))
            lines.append(f"    Concepts: {concepts}")
        elif step == "exploration":
            count = objects(triples, explain_id, TG + "edgeCount")
            seeds = objects(triples, explain_id, TG + "entity")
            lines.append(f"    Explored {text(count[0]) if count else 0} edge(s) from {len(seeds)} seed entit(ies)")
        elif step == "focus":
            selections = objects(triples, explain_id, TG + "selectedEdge")
            lines.append(f"    Selected {len(selections)} edge(s)")
            for note in objects(triples, explain_id, "http://www.w3.org/2000/01/rdf-schema#comment"):
                lines.append(f"    ({text(note)})")
            for selection in selections:
                sid = selection["i"]
                edge = objects(triples, sid, TG + "edge")
                if not edge:
                    continue
                tr = edge[0]["tr"]
                labels = [await self.label(tr[k]) for k in ("s", "p", "o")]
                lines.append(f"      Edge: ({', '.join(labels)})")
                for reason in objects(triples, sid, TG + "reasoning"):
                    lines.append(f"        Reason: {text(reason)}")
                lines.append(f"        Source: {await self.source_chain(edge[0])}")
        elif step == "synthesis":
            for doc in objects(triples, explain_id, TG + "document"):
                lines.append(f"    Answer stored as {text(doc)}")
        tokens = [objects(triples, explain_id, TG + p) for p in ("inToken", "outToken", "llmModel")]
        if any(tokens):
            lines.append("    Tokens: in {} / out {} ({})".format(*(text(t[0]) if t else "?" for t in tokens)))
        return lines
