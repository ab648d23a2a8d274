"""Who owns an entity (RSN-10): the graph's owns / maintains / leads edges merged with the CODEOWNERS
rule that decides the entity's code paths. Owners named alike in both (the "Grid Analytics team" and
@corvid/grid-analytics) are one owner seen twice. Owners the history says were replaced come back as
earlier owners, and every source is dated, so the current owner is listed first (owner_history.py
judges which); when the graph and CODEOWNERS name different owners, a note says so and which is newer."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from tracegraph.base.architecture import at_date, codeowners, graph, owner_history
from tracegraph.base.architecture.codeowners import CodeOwners, Rule
from tracegraph.base.architecture.graph import Entity, name_key, text
from tracegraph.base.architecture.owner_history import Claim
from tracegraph.base.architecture.rules import CodeOwnersShelf, Ruleset, entity_paths
from tracegraph.base.architecture.verbs import OWNERSHIP, Verbs
from tracegraph.base.provenance.uris import entity_uri
from tracegraph.base.provenance.vocab import RDF, TG
from tracegraph.base.stores.keyword import readable
from tracegraph.base.stores.protocol import HISTORY_FACTS_GRAPH
from tracegraph.base.temporal.query import Rows, records_for
from tracegraph.schemas.architecture import CodeOwnersMatch, Owner, OwnershipResponse, Source
from tracegraph.schemas.rdf import IriTerm, Triple, fact_key

_OWNING = Verbs(OWNERSHIP)
_TEAM_WORDS = ("team", "squad", "guild", "group", "department", "board", "office", "crew", "unit")


@dataclass
class _Owner:
    entity: str
    relations: list[str] = field(default_factory=list)
    origins: list[str] = field(default_factory=list)
    sources: list[Source] = field(default_factory=list)
    handles: list[str] = field(default_factory=list)
    edges: list[Triple] = field(default_factory=list)  # the graph facts naming it owner
    replaced: list[Triple] = field(default_factory=list)  # those the current graph no longer holds
    claims: list[Claim] = field(default_factory=list)  # each source naming it, dated


@dataclass(frozen=True, slots=True)
class Found:
    """The answer, and the graph facts it rests on (what a traced answer selects)."""

    response: OwnershipResponse
    edges: tuple[Triple, ...]
    replaced: tuple[Triple, ...] = ()  # facts naming an earlier owner, kept by the history only


def owner_edges(entity: str, facts: Sequence[Triple]) -> list[tuple[str, Triple]]:
    """(owner IRI, fact) for each fact saying who owns, maintains or leads `entity`."""
    found = []
    for fact in facts:
        voice = _OWNING.voice(fact.p.iri)
        if voice == "passive" and fact.s.iri == entity:
            found.append((fact.o.iri, fact))
        elif voice == "active" and fact.o.iri == entity and fact.s.iri != entity:
            found.append((fact.s.iri, fact))
    return found


async def ownership(rows: Rows, entity: Entity, shelf: CodeOwnersShelf, scope: tuple[str, str],
                    as_of: str | None = None) -> Found:
    """Who owns `entity` now, or as the graph and CODEOWNERS stood at `as_of` (see at_date.py)."""
    owners: dict[str, _Owner] = {}
    facts = await at_date.edges(rows, [entity.iri], as_of)
    named = owner_edges(entity.iri, facts)
    replaced = await at_date.begun(rows, await former_owner_edges(rows, entity.iri, [fact for _, fact in named]),
                                   as_of)
    stated = [fact for _, fact in [*named, *replaced]]
    cited = await graph.sources(rows, stated)
    records = await records_for(rows, stated)
    for owner, fact in [*named, *replaced]:
        held = owners.setdefault(owner, _Owner(owner))
        held.relations.append(readable(fact.p.iri))
        held.origins.append("graph")
        (held.edges if (owner, fact) in named else held.replaced).append(fact)
    graph_owners = {owner for owner, _ in named}

    ruleset = await at_date.rules(rows, await shelf.rules(scope, rows), as_of)
    matches = _codeowners_matches(ruleset, await entity_paths(rows, entity, ruleset))
    codeowners_owners = _add_rule_owners(owners, matches, lambda handle_owner: _same_as(
        entity_uri(handle_owner.name), owners, _alias(handle_owner.handle)))
    everyone = {r.uri: r for found in records.values() for r in found}
    dates = await owner_history.document_dates(rows, [
        *(s.document for found in cited.values() for s in found), *(r.document for r in everyone.values()),
        *(m.source.document for m, _ in matches)])
    matches = [(m.model_copy(update={"source": owner_history.dated(m.source, dates)}), rule) for m, rule in matches]
    for o in owners.values():
        o.claims += [claim for fact in o.edges + o.replaced for claim in owner_history.graph_claims(
            o.entity, fact, cited.get(fact_key(fact), []), records.get(fact_key(fact), []), everyone, cited, dates,
            current=fact in o.edges, at=as_of)]
        o.claims += [owner_history.rule_claim(o.entity, source, dates) for source in o.sources]
    kinds = await _kinds(rows, list(owners))
    handles = await _handles(rows, list(owners))
    found_names = await graph.labels(rows, list(owners), fallback=False)
    names = {e: found_names.get(e) or (handles.get(e) or owners[e].handles or [readable(e)])[0] for e in owners}
    for o in owners.values():  # a graph owner CODEOWNERS names by a team handle is a team
        if o.entity not in kinds and any(_owner_kind(h) for h in o.handles):
            kinds[o.entity] = next(k for h in o.handles if (k := _owner_kind(h)))
    judgement = owner_history.judge([c for o in owners.values() for c in o.claims], names)
    listed = sorted((owner_history.standing(Owner(
        entity=o.entity, label=names[o.entity], kind=kinds.get(o.entity, "unknown"),
        handles=list(dict.fromkeys(o.handles + handles.get(o.entity, []))), relations=list(dict.fromkeys(o.relations)),
        origins=list(dict.fromkeys(o.origins)), sources=_unique_sources([c.source for c in o.claims])),
        o.claims, judgement) for o in owners.values()), key=owner_history.listing_order)  # current first
    shown = {o.entity: o.label + (f" ({', '.join(o.handles)})" if o.handles and o.label not in o.handles else "")
             for o in listed}
    agreement, note = _compare(graph_owners, codeowners_owners, shown, [m for m, _ in matches], judgement.reason)
    response = OwnershipResponse(owners=listed, codeowners=[m for m, _ in matches], discrepancy=note,
                                 agreement=agreement, newer=judgement.newer if agreement == "disagree" else "")
    in_order = [owners[o.entity] for o in listed]  # the facts in the order the answer names their owners
    return Found(response, tuple(fact for o in in_order for fact in o.edges),
                 tuple(fact for o in in_order for fact in o.replaced))


async def former_owner_edges(rows: Rows, entity: str, current: Sequence[Triple]) -> list[tuple[str, Triple]]:
    """(owner IRI, fact) for each fact naming an owner of `entity` that the history keeps and the current
    graph no longer holds: an owner a later statement replaced. None in a collection without history."""
    held = {fact_key(fact) for fact in current}
    owning = graph.predicate_pattern(_OWNING.endings)
    query = (f"SELECT ?s ?p ?o WHERE {{ GRAPH <{HISTORY_FACTS_GRAPH}> {{ {{ <{entity}> ?p ?o BIND(<{entity}> AS ?s) }} "
             f"UNION {{ ?s ?p <{entity}> BIND(<{entity}> AS ?o) }} }} FILTER(isIRI(?s) && isIRI(?o) && "
             f"REGEX(STR(?p), \"{owning}\")) }}")
    found = [Triple(s=s, p=p, o=o) for row in await rows(query, graph.MAX_ROWS)
             if isinstance(s := row.get("s"), IriTerm) and isinstance(p := row.get("p"), IriTerm)
             and isinstance(o := row.get("o"), IriTerm)]
    return [(owner, fact) for owner, fact in owner_edges(entity, found) if fact_key(fact) not in held]


async def path_ownership(rows: Rows, path: str, shelf: CodeOwnersShelf, scope: tuple[str, str]) -> OwnershipResponse:
    """Who owns a repository path ("services/skyline/models/train.py", or a directory ending in "/"):
    the CODEOWNERS rule deciding it in each file, and the entities whose code lives there."""
    path = path.lstrip("/")
    ruleset = await shelf.rules(scope, rows)
    def deciding(parsed: CodeOwners) -> Rule | None:
        return parsed.directory_rule(path) if path.endswith("/") else parsed.rule_for(path)

    matches = [_rule_match(document, title, path, "given", rule)
               for document, (title, parsed) in ruleset.files.items() if (rule := deciding(parsed))]
    owners: dict[str, _Owner] = {}
    _add_rule_owners(owners, matches, lambda handle_owner: entity_uri(handle_owner.name))
    listed = [Owner(entity=o.entity, label=o.handles[0], kind=_owner_kind(o.handles[0]) or "unknown",
                    handles=list(dict.fromkeys(o.handles)), relations=["CODEOWNERS"], origins=["codeowners"],
                    sources=_unique_sources(o.sources)) for o in owners.values()]
    return OwnershipResponse(owners=listed, codeowners=[m for m, _ in matches],
                             agreement="codeowners-only" if listed else "none")


def _same_as(iri: str, owners: dict[str, _Owner], alias: str | None = None) -> str:
    """The graph owner a CODEOWNERS handle names, when one is named alike (or like the handle's `alias`);
    else the handle's own entity."""
    keys = {name_key(iri)} | ({name_key(alias)} if alias else set())
    return next((known for known in owners if "graph" in owners[known].origins and name_key(known) in keys), iri)


def _alias(handle: str) -> str | None:
    """An e-mail handle's person by the address's name: lena.stepla@corvid.example → "lena stepla".

    >>> _alias("lena.stepla@corvid.example"), _alias("@corvid/platform-team")
    ('https://trustgraph.ai/e/lena-stepla', None)
    """
    if handle.startswith("@") or "@" not in handle:
        return None
    return entity_uri(handle.split("@", 1)[0].replace(".", " ").replace("_", " "))


def _codeowners_matches(ruleset: Ruleset, paths: Sequence[tuple[str, str]]) -> list[tuple[CodeOwnersMatch, Rule]]:
    """For each code path of the entity and each CODEOWNERS file, the rule that decides it."""
    return [_rule_match(document, title, path, origin, rule) for path, origin in paths
            for document, (title, parsed) in ruleset.files.items() if (rule := parsed.directory_rule(path))]


def _rule_match(document: str, title: str, path: str, origin: str, rule: Rule) -> tuple[CodeOwnersMatch, Rule]:
    source = Source(document=document, title=title, line=rule.line, kind="codeowners")
    return CodeOwnersMatch(path=path, path_origin=origin, pattern=rule.pattern,
                           owners=[o.handle for o in rule.owners], source=source), rule


def _add_rule_owners(owners: dict[str, "_Owner"], matches: Sequence[tuple[CodeOwnersMatch, Rule]],
                     entity_of: Callable[[codeowners.Owner], str]) -> set[str]:
    """Each deciding rule's owners into `owners` (as the entity `entity_of` names), with handle and source;
    returns those entities."""
    named = set()
    for match, rule in matches:
        for handle_owner in rule.owners:
            iri = entity_of(handle_owner)
            named.add(iri)
            held = owners.setdefault(iri, _Owner(iri))
            held.relations.append("CODEOWNERS")
            held.origins.append("codeowners")
            held.handles.append(handle_owner.handle)
            held.sources.append(match.source)
    return named


def _compare(in_graph: set[str], in_codeowners: set[str], names: dict[str, str],
             matches: Sequence[CodeOwnersMatch], newer: str) -> tuple[str, str]:
    if not in_graph and not in_codeowners:
        return "none", ""
    if not in_codeowners:
        return "graph-only", ""
    if not in_graph:
        return "codeowners-only", ""
    if in_graph == in_codeowners:
        return "agree", ""
    only_graph = ", ".join(sorted(names[e] for e in in_graph - in_codeowners))
    only_rules = ", ".join(sorted(names[e] for e in in_codeowners - in_graph))
    where = "; ".join(f"rule {m.pattern}, {m.source.title or m.source.document} line {m.source.line}" for m in matches)
    parts = []
    if only_graph:
        parts.append(f"the graph names {only_graph}, whom CODEOWNERS does not list")
    if only_rules:
        parts.append(f"CODEOWNERS ({where}) names {only_rules}, whom the graph does not name now")
    return "disagree", "The sources disagree: " + "; ".join(parts) + ". " + newer


async def _kinds(rows: Rows, entities: Sequence[str]) -> dict[str, str]:
    """team or person: by the type CODEOWNERS gave it, else by a team word in its name."""
    kinds: dict[str, str] = {}
    if entities:
        for row in await rows(f"SELECT ?e ?t WHERE {{ VALUES ?e {{ {graph.values(entities)} }} "
                              f"?e <{RDF.type.iri}> ?t FILTER(?t IN (<{TG.Team.iri}>, <{TG.Person.iri}>)) }}",
                              len(entities) * 2):
            kinds[text(row.get("e"))] = "team" if text(row.get("t")) == TG.Team.iri else "person"
    for entity in entities:
        if entity not in kinds and any(w in _TEAM_WORDS for w in readable(entity).split()):
            kinds[entity] = "team"
    return kinds


async def _handles(rows: Rows, entities: Sequence[str]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    if entities:
        for row in await rows(f"SELECT ?e ?h WHERE {{ VALUES ?e {{ {graph.values(entities)} }} "
                              f"?e <{TG.contactHandle.iri}> ?h }}", 1000):
            found.setdefault(text(row.get("e")), []).append(text(row.get("h")))
    return found


def _owner_kind(handle: str) -> str | None:
    parsed = codeowners.owner(handle)
    return parsed.kind if parsed else None


def _unique_sources(sources: Sequence[Source]) -> list[Source]:
    return list({(s.document, s.line, s.kind): s for s in sources}.values())

