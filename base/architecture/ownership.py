"""Who owns an entity (RSN-10): the graph's owns / maintains / leads edges merged with the CODEOWNERS
rule that decides the entity's code paths. Owners named alike in both (the "Grid Analytics team" and
@corvid/grid-analytics) are one owner seen twice; when the two sources name different owners, both are
returned with a note saying so, since one of them is out of date."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from tracegraph.base.architecture import codeowners, graph
from tracegraph.base.architecture.codeowners import CodeOwners, Rule
from tracegraph.base.architecture.graph import Entity, name_key, text
from tracegraph.base.architecture.rules import CodeOwnersShelf, Ruleset, entity_paths
from tracegraph.base.architecture.verbs import OWNERSHIP, Verbs
from tracegraph.base.provenance.uris import entity_uri
from tracegraph.base.provenance.vocab import RDF, TG
from tracegraph.base.stores.keyword import readable
from tracegraph.base.temporal.query import Rows
from tracegraph.schemas.architecture import CodeOwnersMatch, Owner, OwnershipResponse, Source
from tracegraph.schemas.rdf import Triple, fact_key

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


@dataclass(frozen=True, slots=True)
class Found:
    """The answer, and the graph facts it rests on (what a traced answer selects)."""

    response: OwnershipResponse
    edges: tuple[Triple, ...]


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


async def ownership(rows: Rows, entity: Entity, shelf: CodeOwnersShelf, scope: tuple[str, str]) -> Found:
    owners: dict[str, _Owner] = {}
    facts = await graph.edges(rows, [entity.iri])
    named = owner_edges(entity.iri, facts)
    cited = await graph.sources(rows, [fact for _, fact in named])
    for owner, fact in named:
        held = owners.setdefault(owner, _Owner(owner))
        held.relations.append(readable(fact.p.iri))
        held.origins.append("graph")
        held.sources += cited.get(fact_key(fact), [])
        held.edges.append(fact)
    graph_owners = set(owners)

    ruleset = await shelf.rules(scope, rows)
    matches = _codeowners_matches(ruleset, await entity_paths(rows, entity, ruleset))
    codeowners_owners = _add_rule_owners(owners, matches, lambda handle_owner: _same_as(
        entity_uri(handle_owner.name), owners, _alias(handle_owner.handle)))
    kinds = await _kinds(rows, list(owners))
    handles = await _handles(rows, list(owners))
    found_names = await graph.labels(rows, list(owners), fallback=False)
    names = {e: found_names.get(e) or (handles.get(e) or owners[e].handles or [readable(e)])[0] for e in owners}
    for o in owners.values():  # a graph owner CODEOWNERS names by a team handle is a team
        if o.entity not in kinds and any(_owner_kind(h) for h in o.handles):
            kinds[o.entity] = next(k for h in o.handles if (k := _owner_kind(h)))
    listed = [Owner(entity=o.entity, label=names[o.entity], kind=kinds.get(o.entity, "unknown"),
                    handles=list(dict.fromkeys(o.handles + handles.get(o.entity, []))),
                    relations=list(dict.fromkeys(o.relations)), origins=list(dict.fromkeys(o.origins)),
                    sources=_unique_sources(o.sources))
              for o in sorted(owners.values(), key=lambda o: (-len(set(o.origins)), names[o.entity].lower()))]
    shown = {o.entity: o.label + (f" ({', '.join(o.handles)})" if o.handles and o.label not in o.handles else "")
             for o in listed}
    agreement, note = _compare(graph_owners, codeowners_owners, shown, [m for m, _ in matches])
    response = OwnershipResponse(owners=listed, codeowners=[m for m, _ in matches], discrepancy=note,
                                 agreement=agreement)
    return Found(response, tuple(fact for o in owners.values() for fact in o.edges))


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
             matches: Sequence[CodeOwnersMatch]) -> tuple[str, str]:
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
        parts.append(f"CODEOWNERS ({where}) names {only_rules}, whom the graph does not")
    return "disagree", ("The sources disagree: " + "; ".join(parts) +
                        ". One of them may be out of date: check the dates of the sources.")


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

