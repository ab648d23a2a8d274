"""Reading a collection's graph for the architecture questions: which entity a name means, an entity's
edges, labels, and the documents (and lines) each fact came from. Everything goes through a `Rows`
function (SELECT text → rows), so the service and search share it over the triples service."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from tracegraph.base.errors import UnknownEntity
from tracegraph.base.extraction.vocabulary import ALIAS
from tracegraph.base.provenance.uris import entity_uri, relation_uri, slug
from tracegraph.base.provenance.vocab import DC, PROV, RDFS, TG
from tracegraph.base.retrieval.labels import label_batches, read_labels
from tracegraph.base.review.items import term_text
from tracegraph.base.stores.keyword import readable
from tracegraph.base.stores.protocol import SOURCE_GRAPH
from tracegraph.base.temporal.query import Rows, sparql_term
from tracegraph.schemas.architecture import Source
from tracegraph.schemas.rdf import IriTerm, Term, Triple, TripleTerm, fact_key

MAX_ROWS = 20_000
_BATCH = 200  # terms per VALUES block
_IRI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:[^\x00-\x20<>\"{}|^`\\]+")
_DROPPED_WORDS = ("the ",)
_SUFFIXES = (" service", " system", " platform", " app", " application")


@dataclass(frozen=True, slots=True)
class Entity:
    iri: str
    label: str


def text(term: Term | None) -> str:
    """A row value's text; an unbound variable's is empty."""
    return "" if term is None else term_text(term)


def candidates(name: str) -> list[str]:
    """The entity IRIs a name may mean, most literal first: "the checkout service" → checkout-service,
    then checkout; an @handle → the entity its owner name makes."""
    name = " ".join(name.split())
    if _IRI.fullmatch(name) and not name.startswith("@"):
        return [name]
    forms = [name]
    lowered = name.lower()
    for prefix in _DROPPED_WORDS:
        if lowered.startswith(prefix):
            forms.append(name[len(prefix):])
    for form in list(forms):
        for suffix in _SUFFIXES:
            if form.lower().endswith(suffix):
                forms.append(form[: -len(suffix)])
    if name.startswith("@"):
        forms.append(name.rsplit("/", 1)[-1].lstrip("@"))
    return list(dict.fromkeys(entity_uri(form) for form in forms if form.strip()))


def is_path(name: str) -> bool:
    """A repository path ("services/skyline/", "src/app.py"), not a name or an IRI.

    >>> is_path("services/skyline/"), is_path("https://trustgraph.ai/e/skyline"), is_path("Skyline")
    (True, False, False)
    """
    return "/" in name and " " not in name.strip() and not _IRI.fullmatch(name.strip())


def values(terms: Iterable[str | Term]) -> str:
    return " ".join(f"<{t}>" if isinstance(t, str) else sparql_term(t) for t in terms)


async def resolve(rows: Rows, name: str, collection: str = "") -> Entity:
    """The entity a name or IRI means in this collection: the first candidate the graph holds anything
    about, or the entity it is an alias of ("LGR" when "Ledger is also known as LGR"). Names match in any
    case (an entity IRI is its label's slug). UnknownEntity (→ 404) names what was looked for."""
    wanted = candidates(name)
    found = await rows(f"""SELECT ?e (SAMPLE(?l) AS ?label) (SAMPLE(?c) AS ?canon) (SAMPLE(?cl) AS ?canonLabel)
        WHERE {{ VALUES ?e {{ {values(wanted)} }} {{ ?e ?p ?o }} UNION {{ ?s ?p ?e }}
        OPTIONAL {{ ?e <{RDFS.label.iri}> ?l }}
        OPTIONAL {{ ?c <{relation_uri(ALIAS)}> ?e OPTIONAL {{ ?c <{RDFS.label.iri}> ?cl }} }} }} GROUP BY ?e""",
                       len(wanted))
    held = {text(row.get("e")): row for row in found if row.get("e") is not None}
    for candidate in wanted:
        if candidate in held:
            row = held[candidate]
            canon = text(row.get("canon"))
            if canon:
                return Entity(canon, text(row.get("canonLabel")) or readable(canon))
            return Entity(candidate, text(row.get("label")) or readable(candidate))
    where = f" in collection {collection!r}" if collection else ""
    raise UnknownEntity(f"no entity {name!r}{where} (looked for {', '.join(wanted)})")


async def labels(rows: Rows, entities: Sequence[str], fallback: bool = True) -> dict[str, str]:
    """rdfs:label of each IRI (a readable form of the IRI when it has none, unless `fallback` is off:
    then only the labels found)."""
    found: dict[str, str] = {}
    unique = list(dict.fromkeys(entities))
    for _batch, query in label_batches(unique):
        read_labels(await rows(query, MAX_ROWS), found)
    if not fallback:
        return {e: found[e] for e in unique if found.get(e)}
    return {e: found.get(e) or readable(e) for e in unique}


async def edges(rows: Rows, entities: Sequence[str], limit: int = MAX_ROWS,
                endings: Sequence[str] = (), within: str | None = None) -> list[Triple]:
    """Every fact of the default graph (or the named graph `within`) with one of `entities` as subject or
    object and an IRI at the other end; only those whose predicate's words end with one of `endings` (verb
    phrases) when given, so a busy entity's other edges never leave the store."""
    out: list[Triple] = []
    unique = list(dict.fromkeys(entities))
    wanted = f" FILTER(REGEX(STR(?p), \"{predicate_pattern(endings)}\"))" if endings else ""
    for i in range(0, len(unique), _BATCH):
        batch = values(unique[i:i + _BATCH])
        spo = f"GRAPH <{within}> {{ ?s ?p ?o }}" if within else "?s ?p ?o"
        query = (f"SELECT ?s ?p ?o WHERE {{ {{ VALUES ?s {{ {batch} }} {spo} FILTER(isIRI(?o)){wanted} }} UNION "
                 f"{{ VALUES ?o {{ {batch} }} {spo} FILTER(isIRI(?s)){wanted} }} }}")
        for row in await rows(query, limit):
            s, p, o = row.get("s"), row.get("p"), row.get("o")
            if isinstance(s, IriTerm) and isinstance(p, IriTerm) and isinstance(o, IriTerm):
                out.append(Triple(s=s, p=p, o=o))
    return out


def predicate_pattern(endings: Sequence[str]) -> str:
    """A SPARQL regex matching predicate IRIs whose last words are one of the phrases (as slugs, after a
    separator), for a prefilter; the words are checked again in Python.

    >>> predicate_pattern(["depends on", "used by"])
    '(^|[/#-])(depends-on|used-by)$'
    """
    return "(^|[/#-])(" + "|".join(slug(e) for e in endings) + ")$"  # slugs: [a-z0-9-] only


async def sources(rows: Rows, facts: Sequence[Triple]) -> dict[str, list[Source]]:
    """The documents each fact was extracted from (fact_key → sources), with the line where the facts were
    read from a line (CODEOWNERS, ADRs) — through the subgraphs that contain it, as every trace resolves."""
    found: dict[str, dict[tuple[str, int | None], Source]] = defaultdict(dict)
    unique = list({fact_key(f): f for f in facts}.values())
    for i in range(0, len(unique), _BATCH):
        batch = values(TripleTerm(triple=Triple(s=f.s, p=f.p, o=f.o)) for f in unique[i:i + _BATCH])
        query = f"""SELECT ?t ?doc ?title ?author ?line ?first ?last WHERE {{ VALUES ?t {{ {batch} }}
            GRAPH <{SOURCE_GRAPH}> {{ ?sg <{TG.contains.iri}> ?t ; <{PROV.wasDerivedFrom.iri}> ?parent .
              ?parent <{PROV.wasDerivedFrom.iri}>* ?doc . OPTIONAL {{ ?parent <{TG.lineNumber.iri}> ?line }}
              OPTIONAL {{ ?sg <{TG.firstLine.iri}> ?first ; <{TG.lastLine.iri}> ?last }} }}
            ?doc a <{TG.Document.iri}> . OPTIONAL {{ ?doc <{DC.title.iri}> ?title }}
            OPTIONAL {{ ?doc <{DC.creator.iri}> ?author }} }}"""
        for row in await rows(query, MAX_ROWS):
            t = row.get("t")
            if not isinstance(t, TripleTerm):
                continue
            document = text(row.get("doc"))
            line, last = _int(row.get("line")), None
            if line is None:  # a prose fact: the lines of its subgraph
                line, last = _int(row.get("first")), _int(row.get("last"))
            found[fact_key(t.triple)].setdefault((document, line), Source(
                document=document, title=text(row.get("title")), line=line,
                last_line=last if last != line else None, author=text(row.get("author")), kind="graph"))
    return {key: list(by_place.values()) for key, by_place in found.items()}


def _int(term: Term | None) -> int | None:
    try:
        return int(text(term)) if term is not None else None
    except ValueError:
        return None


def name_key(entity: str) -> str:
    """What owners named alike share: the slug less team-ish words ("Grid Analytics team" and
    @corvid/grid-analytics are one owner).

    >>> name_key("https://trustgraph.ai/e/grid-analytics-team") == name_key("https://trustgraph.ai/e/grid-analytics")
    True
    """
    words = [w for w in slug(readable(entity)).split("-") if w not in {"the", "team", "squad", "group", "dept"}]
    return "-".join(words) or slug(readable(entity))

