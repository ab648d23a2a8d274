"""Reading a collection's architecture landscape (landscape.py) through a `Rows` function, so the
community processor and global search read it the same way: the canonical relation facts of the
default graph with their dated sources, former owners from the history, the CODEOWNERS rules deciding
each entity's code path, the architecture memory's records, and the entities' types and names."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from tracegraph.base.architecture import graph
from tracegraph.base.architecture.graph import text
from tracegraph.base.architecture.landscape import (
    CANONICAL, ArchitectureRecord, Evidence, Landscape, OwnerClaim, assemble,
)
from tracegraph.base.architecture.owner_history import dated, document_dates
from tracegraph.base.architecture.rules import read_rules
from tracegraph.base.architecture.triples import KIND_OF_CLASS, RELATION_OF_PREDICATE, RELATIONS
from tracegraph.base.extraction.vocabulary import KIND_OF, OWNERSHIP_LABELS
from tracegraph.base.provenance.uris import codeowners_rule_uri, entity_uri, relation_uri
from tracegraph.base.provenance.vocab import DC, PROV, RDF, RDFS, TG
from tracegraph.base.stores.protocol import HISTORY_FACTS_GRAPH
from tracegraph.base.temporal.query import Rows, records_for
from tracegraph.schemas.architecture import Source
from tracegraph.schemas.rdf import IriTerm, Triple, fact_key, iri

MAX_FACTS = 200_000
_BATCH = 200
_OWNING = {relation_uri(label): label for label in OWNERSHIP_LABELS}


def _predicates(iris) -> str:
    return " ".join(f"<{p}>" for p in iris)


CURRENT_QUERY = f"SELECT ?s ?p ?o WHERE {{ VALUES ?p {{ {_predicates(CANONICAL)} }} ?s ?p ?o }}"
# Ownership facts the history keeps that no longer hold: a later statement replaced them.
FORMER_QUERY = (f"SELECT ?s ?p ?o WHERE {{ VALUES ?p {{ {_predicates(_OWNING)} }} "
                f"GRAPH <{HISTORY_FACTS_GRAPH}> {{ ?s ?p ?o }} FILTER NOT EXISTS {{ ?s ?p ?o }} }}")
RECORDS_QUERY = f"""SELECT ?m ?type ?title ?date ?status ?line ?doc ?dtitle ?cause ?rel ?e WHERE {{
    VALUES ?type {{ {_predicates(KIND_OF_CLASS)} }} ?m <{RDF.type.iri}> ?type ; <{RDFS.label.iri}> ?title .
    OPTIONAL {{ ?m <{DC.date.iri}> ?date }} OPTIONAL {{ ?m <{TG.decisionStatus.iri}> ?status }}
    OPTIONAL {{ ?m <{TG.lineNumber.iri}> ?line }} OPTIONAL {{ ?m <{TG.rootCause.iri}>|<{TG.rationale.iri}> ?cause }}
    OPTIONAL {{ ?m <{PROV.wasDerivedFrom.iri}> ?doc . OPTIONAL {{ ?doc <{DC.title.iri}> ?dtitle }} }}
    OPTIONAL {{ VALUES ?rel {{ {_predicates(p.iri for p in RELATIONS.values())} }} ?m ?rel ?e FILTER(isIRI(?e)) }} }}"""
CODE_PATHS_QUERY = f"SELECT ?e ?path WHERE {{ ?e <{TG.codePath.iri}> ?path }}"


async def read_landscape(rows: Rows) -> Landscape:
    """The collection's landscape as the store holds it now."""
    facts = _triples(await rows(CURRENT_QUERY, MAX_FACTS))
    former_facts = _triples(await rows(FORMER_QUERY, MAX_FACTS))
    records = await _records(rows)
    rule_claims = await _rule_claims(rows)
    cited = await graph.sources(rows, facts)
    history = await records_for(rows, former_facts) if former_facts else {}
    documents = [s.document for found in cited.values() for s in found]
    documents += [r.document for found in history.values() for r in found]
    dates = await document_dates(rows, documents)
    cited = {key: [dated(s, dates) for s in found] for key, found in cited.items()}
    titles = await _titles(rows, [r.document for found in history.values() for r in found])
    former = [claim for fact in former_facts
              for claim in _former_claims(fact, history.get(fact_key(fact), []), dates, titles)]
    entities = {t.s.iri for t in facts} | {t.o.iri for t in facts if isinstance(t.o, IriTerm)}
    entities |= {c.entity for c in (*rule_claims, *former)} | {c.owner for c in (*rule_claims, *former)}
    entities |= {e for r in records for _, e in r.links}
    ordered = sorted(entities)
    return assemble(facts, cited=cited, records=records, rule_claims=rule_claims, former=former,
                    kinds=await _kinds(rows, ordered), labels=await graph.labels(rows, ordered, fallback=False))


def _triples(found: Sequence) -> list[Triple]:
    out = []
    for row in found:
        s, p, o = row.get("s"), row.get("p"), row.get("o")
        if isinstance(s, IriTerm) and isinstance(p, IriTerm) and o is not None:
            out.append(Triple(s=s, p=p, o=o))
    return out


def _former_claims(fact: Triple, records, dates, titles: dict[str, str]) -> list[OwnerClaim]:
    """A replaced ownership fact, once per document that stated it, with the day it stopped holding."""
    claims = []
    for record in records:
        if not record.valid_until:
            continue
        source = dated(Source(document=record.document, title=titles.get(record.document, ""), kind="graph"), dates)
        claims.append(OwnerClaim(fact.s.iri, fact.o.iri, _OWNING[fact.p.iri], "graph",
                                 Evidence(fact, (source,)), until=record.valid_until[:10]))
    return claims


async def _records(rows: Rows) -> list[ArchitectureRecord]:
    """Each record with the entities it names; its type fact and links are its evidence."""
    found: dict[str, dict] = {}
    for row in await rows(RECORDS_QUERY, MAX_FACTS):
        node = text(row.get("m"))
        held = found.setdefault(node, {"row": row, "links": []})
        if row.get("rel") is not None:
            held["links"].append((RELATION_OF_PREDICATE[text(row.get("rel"))], text(row.get("e"))))
    records = []
    for node, held in found.items():
        row, links = held["row"], list(dict.fromkeys(held["links"]))
        line = text(row.get("line"))
        source = Source(document=text(row.get("doc")), title=text(row.get("dtitle")), kind="graph",
                        line=int(line) if line.isdigit() else None, date=text(row.get("date"))[:10])
        kind = KIND_OF_CLASS[text(row.get("type"))]
        facts = [Triple(s=iri(node), p=RDF.type, o=iri(text(row.get("type")))),
                 *(Triple(s=iri(node), p=RELATIONS[relation], o=iri(entity)) for relation, entity in links)]
        records.append(ArchitectureRecord(
            node=node, kind=kind, title=text(row.get("title")), date=source.date,
            status=text(row.get("status")).lower(), links=tuple(links),
            evidence=tuple(Evidence(f, (source,)) for f in facts), source=source, cause=text(row.get("cause"))))
    return sorted(records, key=lambda r: (r.date, r.title))


async def _rule_claims(rows: Rows) -> list[OwnerClaim]:
    """For each code path a fact gives an entity, the owners of the CODEOWNERS rule deciding it, per file."""
    paths = [(text(row.get("e")), text(row.get("path"))) for row in await rows(CODE_PATHS_QUERY, MAX_FACTS)]
    if not paths:
        return []
    ruleset = await read_rules(rows)
    claims = []
    for entity, path in paths:
        for document, (title, parsed) in ruleset.files.items():
            rule = parsed.directory_rule(path)
            if rule is None:
                continue
            source = Source(document=document, title=title, line=rule.line, kind="codeowners")
            for owner in rule.owners:
                owner_iri = entity_uri(owner.name)
                fact = Triple(s=iri(codeowners_rule_uri(document, rule.line)), p=TG.codeOwner, o=iri(owner_iri))
                claims.append(OwnerClaim(entity, owner_iri, "CODEOWNERS", "codeowners", Evidence(fact, (source,))))
    return claims


async def _titles(rows: Rows, documents: Sequence[str]) -> dict[str, str]:
    unique = sorted(set(documents))
    found: dict[str, str] = {}
    for i in range(0, len(unique), _BATCH):
        query = (f"SELECT ?doc ?title WHERE {{ VALUES ?doc {{ {graph.values(unique[i:i + _BATCH])} }} "
                 f"?doc <{DC.title.iri}> ?title }}")
        found.update({text(row.get("doc")): text(row.get("title")) for row in await rows(query, 2 * _BATCH)})
    return found


async def _kinds(rows: Rows, entities: Sequence[str]) -> dict[str, set[str]]:
    """Each entity's domain types and "is a" categories (two dependencies of one kind are alternatives);
    the extractor's own broad classes (tg:Service, tg:Datastore …) say too little to count."""
    kinds: dict[str, set[str]] = defaultdict(set)
    category = relation_uri(KIND_OF)
    for i in range(0, len(entities), _BATCH):
        query = (f"SELECT ?e ?k WHERE {{ VALUES ?e {{ {graph.values(entities[i:i + _BATCH])} }} "
                 f"{{ ?e <{RDF.type.iri}> ?k }} UNION {{ ?e <{category}> ?k }} "
                 f"FILTER(isIRI(?k) && !STRSTARTS(STR(?k), \"{TG.base}\")) }}")
        for row in await rows(query, MAX_FACTS):
            kinds[text(row.get("e"))].add(text(row.get("k")))
    return kinds
