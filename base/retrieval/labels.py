"""rdfs:label of many IRIs in few round trips, through any RetrievalTools: one read-only SPARQL query
per LABEL_BATCH IRIs; an engine without SPARQL (Cassandra) gets one pattern lookup per IRI."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence

from tracegraph.base.errors import RemoteError
from tracegraph.base.provenance.vocab import RDFS
from tracegraph.schemas.rdf import IriTerm, LiteralTerm, Term

LABEL_BATCH = 400


def label_batches(iris: Sequence[str]) -> Iterator[tuple[list[str], str]]:
    """(IRIs, the SELECT of their labels) per LABEL_BATCH; an IRI that cannot be written in a query is
    left out (it has no label to find)."""
    for start in range(0, len(iris), LABEL_BATCH):
        batch = [i for i in iris[start:start + LABEL_BATCH] if ">" not in i and " " not in i]
        yield batch, ("SELECT ?s ?l WHERE { VALUES ?s { " + " ".join(f"<{i}>" for i in batch) +
                      f" }} ?s <{RDFS.label.iri}> ?l }}")


def read_labels(bindings: Iterable[Mapping[str, Term]], into: dict[str, str]) -> None:
    """Each subject's first label from the rows of a `label_batches` query."""
    for row in bindings:
        s, label = row.get("s"), row.get("l")
        if isinstance(s, IriTerm) and isinstance(label, LiteralTerm):
            into.setdefault(s.iri, label.value)


async def fetch_labels(tools, iris: Sequence[str]) -> dict[str, str]:
    """IRI -> its first label, for those that have one."""
    found: dict[str, str] = {}
    for batch, query in label_batches(iris):
        try:
            reply = await tools.sparql(query, limit=len(batch) * 4, timeout=30)
        except RemoteError:
            for value in batch:
                hit = await tools.match(s=IriTerm(iri=value), p=RDFS.label, limit=1)
                if hit and isinstance(hit[0].o, LiteralTerm):
                    found[value] = hit[0].o.value
            continue
        read_labels(reply.bindings, found)
    return found
