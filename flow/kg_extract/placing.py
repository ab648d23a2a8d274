"""Where a chunk's facts were read: one subgraph per line span of its document (tg:firstLine–tg:lastLine),
each derived from the chunk, so a trace reads "lines 12–14 of services/billing/README.md"; the chunk's own
subgraph holds the facts that could not be placed and names every entity the chunk mentions. A fact stored
under a canonical predicate keeps the text's own words on a reifier (tg:phrase)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from tracegraph.base.extraction.facts import Extraction, Lines, mentions, phrases, placed_facts
from tracegraph.base.provenance.extraction import Component, phrase_triples, subgraph_triples
from tracegraph.base.provenance.uris import lines_subgraph_uri, statement_uri, subgraph_uri
from tracegraph.schemas.rdf import Triple, fact_key


def placed_provenance(chunk: str, accepted: Sequence[Triple], extraction: Extraction, *, component: Component,
                      timestamp: str, extractor: str, llm_model: str | None) -> list[Triple]:
    """The subgraphs of a chunk's accepted facts, grouped by the lines they came from."""
    where = placed_facts(extraction)
    by_lines: dict[Lines | None, list[Triple]] = defaultdict(list)
    for fact in accepted:
        by_lines[where.get(_bare(fact))].append(fact)
    said = phrases(extraction)
    main = subgraph_uri(chunk, extractor)
    out = subgraph_triples(main, chunk, by_lines.pop(None, []), component=component, timestamp=timestamp,
                           extractor=extractor, llm_model=llm_model, mentions=mentions(extraction))
    for lines, facts in sorted(by_lines.items()):
        subgraph = lines_subgraph_uri(chunk, extractor, lines)
        out += subgraph_triples(subgraph, chunk, facts, component=component, timestamp=timestamp, extractor=extractor,
                                llm_model=llm_model, lines=lines)
        for fact in facts:
            phrase = said.get(fact_key(fact))
            if phrase:
                out += phrase_triples(statement_uri(subgraph, fact_key(fact)), subgraph, fact, phrase)
    return out


def _bare(fact: Triple) -> Triple:
    return fact if fact.g is None else fact.model_copy(update={"g": None})
