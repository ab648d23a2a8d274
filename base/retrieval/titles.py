"""Documents by title, as answers name their sources."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from tracegraph.base.provenance.vocab import DC
from tracegraph.schemas.rdf import LiteralTerm, iri


async def document_titles(tools, documents: Iterable[str], known: Mapping[str, str] | None = None) -> dict[str, str]:
    """dc:title of each document (its IRI when it has none), in the order given; titles already
    `known` (say, to the passage graph) are not looked up again."""
    known = known or {}
    titles: dict[str, str] = {}
    for document in dict.fromkeys(documents):
        if document in known:
            titles[document] = known[document]
            continue
        found = await tools.match(s=iri(document), p=DC.title, limit=1)
        titles[document] = found[0].o.value if found and isinstance(found[0].o, LiteralTerm) else document
    return titles
