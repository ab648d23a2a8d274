"""rdfs:label of many IRIs in few round trips, through any RetrievalTools: one read-only SPARQL query
per LABEL_BATCH IRIs; an engine without SPARQL (Cassandra) gets one pattern lookup per IRI."""

from __future__ import annotations

from collections.abc import Sequence

from tracegraph.base.errors import RemoteError
from tracegraph.base.provenance.vocab import RDFS
from tracegraph.schemas.rdf import IriTerm, LiteralTerm

LABEL_BATCH = 400


async def fetch_labels(tools, iris: Sequence[str]) -> dict[str, str]:
    """IRI -> its first label, for those that have one."""
    found: dict[str, str] = {}
    for start in range(0, len(iris), LABEL_BATCH):
        batch = [i for i in iris[start:start + LABEL_BATCH] if ">" not in i and " " not in i]
        query = ("SELECT ?s ?l WHERE { VALUES ?s { " + " ".join(f"<{i}>" for i in batch) +
                 f" }} ?s <{RDFS.label.iri}> ?l }}")
        try:
            reply = await tools.sparql(query, limit=len(batch) * 4, timeout=30)
        except RemoteError:
            for value in batch:
                hit = await tools.match(s=IriTerm(iri=value), p=RDFS.label, limit=1)
                if hit and isinstance(hit[0].o, LiteralTerm):
                    found[value] = hit[0].o.value
            continue
        for row in reply.bindings:
            s, label = row.get("s"), row.get("l")
            if isinstance(s, IriTerm) and isinstance(label, LiteralTerm):
                found.setdefault(s.iri, label.value)
    return found
