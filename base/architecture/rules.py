"""A collection's CODEOWNERS files as parsed rules, read back from the graph (each file's rules with
their lines and handles), and the code paths an entity has: from facts saying where its code lives,
else from a CODEOWNERS directory named like it. Held per collection for a few seconds: every
ownership answer consults every rule, and rules change only when a CODEOWNERS file is loaded."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from tracegraph.base.architecture import codeowners
from tracegraph.base.architecture.codeowners import CodeOwners, Rule
from tracegraph.base.architecture.graph import Entity, name_key, text
from tracegraph.base.provenance.uris import slug
from tracegraph.base.provenance.vocab import DC, PROV, RDF, TG
from tracegraph.base.retrieval.held import Shelf
from tracegraph.base.temporal.query import Rows

MAX_RULES = 200_000
_GLOB = set("*?[")


@dataclass(frozen=True, slots=True)
class Ruleset:
    files: dict[str, tuple[str, CodeOwners]] = field(default_factory=dict)  # document → (title, its rules)


async def read_rules(rows: Rows) -> Ruleset:
    query = f"""SELECT ?rule ?doc ?title ?pattern ?line ?handle WHERE {{
        ?rule <{RDF.type.iri}> <{TG.CodeOwnersRule.iri}> ; <{TG.pathPattern.iri}> ?pattern ;
              <{TG.lineNumber.iri}> ?line ; <{PROV.wasDerivedFrom.iri}> ?doc .
        OPTIONAL {{ ?doc <{DC.title.iri}> ?title }} OPTIONAL {{ ?rule <{TG.contactHandle.iri}> ?handle }} }}"""
    rules: dict[str, dict[int, tuple[str, list[str]]]] = defaultdict(dict)
    titles: dict[str, str] = {}
    for row in await rows(query, MAX_RULES):
        document, line = text(row.get("doc")), int(text(row.get("line")) or 0)
        titles[document] = text(row.get("title")) or titles.get(document, "")
        pattern, handles = rules[document].setdefault(line, (text(row.get("pattern")), []))
        if row.get("handle") is not None:
            handles.append(text(row.get("handle")))
    files = {}
    for document, by_line in rules.items():
        parsed = tuple(Rule(line, pattern, tuple(o for h in sorted(set(handles)) if (o := codeowners.owner(h))))
                       for line, (pattern, handles) in sorted(by_line.items()))
        files[document] = (titles.get(document, ""), CodeOwners(rules=parsed, problems=()))
    return Ruleset(files)


class CodeOwnersShelf(Shelf[Ruleset]):
    """Each collection's rules, read at most every `max_age` seconds (dropped at once on a graph update)."""

    async def rules(self, scope: tuple[str, str], rows: Rows) -> Ruleset:
        return await self.held(scope, rows)

    async def read(self, rows: Rows) -> Ruleset:
        return await read_rules(rows)


async def entity_paths(rows: Rows, entity: Entity, ruleset: Ruleset) -> list[tuple[str, str]]:
    """(path, origin): "graph" for a fact saying where its code lives; "name" for a CODEOWNERS directory
    whose last segment is named like the entity (services/skyline/ for Skyline), when no fact says."""
    found = [(text(row.get("path")), "graph") for row in await rows(
        f"SELECT ?path WHERE {{ <{entity.iri}> <{TG.codePath.iri}> ?path }}", 100)]
    if found or not ruleset.files:
        return found
    wanted = {name_key(entity.iri), slug(entity.label)}
    named = []
    for _, parsed in ruleset.files.values():
        for rule in parsed.rules:
            directory = rule.pattern.strip("/")
            if directory and not _GLOB & set(directory) and directory.rsplit("/", 1)[-1] in wanted:
                named.append((directory + "/", "name"))
    return list(dict.fromkeys(named))
