"""A generated organisation with known ownership truth, for bench/architecture_routes.py.

Services each have a true owning team and a code directory (services/<slug>/, <group>/<slug>/, or nested
under another service). A CODEOWNERS file is written from that truth with the complications real ones
have: a catch-all `*`, broad group rules first, nested rules that override, extension and file rules that
must not decide a directory, stale rules naming a former team (some fixed by a later line), rules shadowed
by a broad rule written after them, e-mail handles, and malformed lines GitHub skips. The graph holds
what the extractors would write about it, in their own shapes (base/architecture/triples.py for
CODEOWNERS rules, code paths and memory records; kg-extract's facts, labels, chunk and subgraph for
ordinary facts): ownership and lead edges (some services only in the graph, some only in CODEOWNERS),
code paths for most services, dependency edges with cycles and a few hubs with hundreds of dependants,
decisions and failure patterns, then filler facts about other entities up to the asked size.

The truth is worked out here, apart from the code under test: which line decides a directory follows from
the generated rules' own simple shapes (directory prefixes, one name anywhere, `*`), never from the parser.

    .venv/bin/python bench/architecture_data.py --check       # a tiny organisation, its truth checked
"""

from __future__ import annotations

import argparse
import itertools
import random
import sys
import time
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pyoxigraph as ox
import synthetic_graph  # bench/ is on sys.path when a bench script runs
from tracegraph.base.architecture import codeowners
from tracegraph.base.architecture.code_paths import CodePath
from tracegraph.base.architecture.memory_docs import MemoryRecord
from tracegraph.base.architecture.triples import (
    code_path_facts,
    codeowners_facts,
    memory_facts,
    problem_triples,
    with_provenance,
)
from tracegraph.base.documents import CODEOWNERS
from tracegraph.base.provenance.extraction import (
    Component,
    chunk_triples,
    document_triples,
    subgraph_triples,
)
from tracegraph.base.provenance.uris import (
    chunk_uri,
    entity_uri,
    relation_uri,
    slug,
    subgraph_uri,
)
from tracegraph.base.provenance.vocab import RDFS
from tracegraph.base.stores.terms import quad_to_ox
from tracegraph.schemas.rdf import Triple, iri, literal

ORG = "corvid"
TIME = "2025-06-01T09:00:00Z"
DOCUMENT = "urn:trustgraph:doc:arch-bench-"
CHUNKER, EXTRACTOR = Component("chunker", "bench"), Component("kg-extract", "bench")
FACTS_PER_CHUNK, CHUNKS_PER_DOCUMENT = 20, 10
GROUPS = {"platform": True, "data": True, "payments": True, "edge": False, "ml": False}  # group → has a broad rule
SERVICE_NOUNS = ("Gateway", "Ledger", "Relay", "Feed", "Router", "Vault", "Index", "Scheduler", "Broker", "Cache",
                 "Portal", "Engine", "Tracker", "Sync", "Notifier", "Registry", "Planner", "Collector", "Exporter",
                 "Monitor")
TEAM_FUNCTIONS = ("Billing", "Search", "Identity", "Payments", "Forecasting", "Storage", "Messaging", "Insights",
                  "Pricing", "Routing", "Reliability", "Onboarding", "Checkout", "Ledgers", "Telemetry", "Catalog")
FIRST_NAMES = ("Ada", "Mei", "Tomas", "Jonas", "Ines", "Ravi", "Lena", "Omar", "Yuki", "Sofia", "Nia", "Pavel",
               "Aiko", "Bruno", "Chen", "Dara", "Elif", "Farid", "Greta", "Hana", "Ivo", "Jana", "Kofi", "Lior")
OWNED = (("is owned by", 0.5), ("owns", 0.25), ("maintains", 0.15), ("is maintained by", 0.1))
DEPENDS = (("depends on", 0.5), ("calls", 0.25), ("uses", 0.15), ("is used by", 0.05), ("is called by", 0.05))
PASSIVE = {"is owned by", "is maintained by", "is used by", "is called by", "is led by"}  # subject is the service
# Shares of each service's own CODEOWNERS line; "shadowed" needs a group with a broad rule, else it is "own".
RULES = (("own", 0.62), ("none", 0.18), ("stale", 0.06), ("fixed", 0.04), ("malformed", 0.05), ("shadowed", 0.05))
FORMS = (("/{dir}", 0.70), ("{dir}", 0.15), ("/{bare}", 0.10), ("{slug}/", 0.05))  # how a service's line is written
DIRECTORY_KINDS = frozenset({"catch-all", "group", "services", "own", "stale", "fixed", "shadowed", "subdirectory"})
DECISIONS = ("moves to event sourcing", "runs in two regions", "drops the nightly batch", "adopts gRPC",
             "keeps its own database", "moves to the shared cache", "splits reads from writes")
FAILURES = ("ran out of connections", "returned stale data", "timed out under load", "lost its leader")


@dataclass(frozen=True, slots=True)
class Owner:
    """A team or person: who it is (`identity`), how the graph names it, and how CODEOWNERS writes it."""

    identity: str  # "team:<key>" or "person:<key>"
    label: str
    handle: str

    @property
    def iri(self) -> str:
        return entity_uri(self.label)


@dataclass(frozen=True, slots=True)
class Line:
    """One CODEOWNERS line as written, and what it is there for (`kind`)."""

    text: str
    kind: str  # a DIRECTORY_KINDS kind, or comment, extension, file, anywhere, unowned, malformed
    pattern: str = ""
    owners: tuple[Owner, ...] = ()

    def decides(self, directory: str) -> bool:
        """Whether this line's rule covers the whole directory, for the shapes written here: `*`, an anchored
        directory prefix (a `/` before its last character), or one name anywhere (`name/`).

        >>> Line("x", "own", "/services/a").decides("services/a/"), Line("x", "own", "a/").decides("edge/a/")
        (True, True)
        """
        if self.kind not in DIRECTORY_KINDS:
            return False
        if self.pattern == "*":
            return True
        body = self.pattern.strip("/")
        if "/" in self.pattern.rstrip("/"):
            return directory.startswith(body + "/")
        return body in directory.strip("/").split("/")


@dataclass(frozen=True, slots=True)
class Service:
    label: str
    directory: str
    team: Owner
    lead: Owner | None
    owned_by: str | None  # the predicate stating its owner in the graph; None: the graph does not say
    code_path: bool  # a fact says where its code lives (else only a directory named like it tells)
    rule: str  # its own CODEOWNERS line: own, stale, fixed, shadowed, malformed or none
    former: Owner | None = None  # the team a stale (or later fixed) line names

    @property
    def slug(self) -> str:
        return slug(self.label)


@dataclass(frozen=True, slots=True)
class Expected:
    """What a correct ownership answer holds for a service."""

    graph_owners: frozenset[str]  # IRIs of the owners the graph names
    path: str | None  # the directory to decide CODEOWNERS for; None when nothing tells it
    path_origin: str | None  # "graph" (a code-path fact) or "name" (a rule's directory named like it)
    deciding: Line | None  # the CODEOWNERS line that decides that directory
    agreement: str  # none, graph-only, codeowners-only, agree or disagree: by who the owners are
    stale: bool  # its own line names a former team


@dataclass
class Organisation:
    seed: int
    teams: list[Owner]
    people: list[Owner]
    services: list[Service]
    lines: list[Line]
    dependencies: list[tuple[str, str, str]]  # (subject, predicate, object) as written
    hubs: list[str]  # service labels with hundreds of dependants
    memories: list[MemoryRecord]
    decoys: list[tuple[str, str, str]] = field(default_factory=list)  # facts near services that are not ownership

    @property
    def codeowners_text(self) -> str:
        return "\n".join(line.text for line in self.lines) + "\n"

    def deciding_line(self, directory: str) -> Line | None:
        """The last line covering the directory (GitHub: the last matching rule wins)."""
        return next((line for line in reversed(self.lines) if line.decides(directory)), None)

    def dependants(self, labels: Sequence[str]) -> list[int]:
        """How many services depend on each of these directly."""
        counted = Counter(s if p in PASSIVE else o for s, p, o in self.dependencies)
        return [counted[label] for label in labels]

    def line_number(self, line: Line) -> int:
        return next(i for i, held in enumerate(self.lines, start=1) if held is line)

    def expected(self, service: Service) -> Expected:
        graph = {service.team} if service.owned_by else set()
        graph |= {service.lead} if service.lead else set()
        findable = service.rule in ("own", "stale", "fixed", "shadowed")  # a line the parser keeps names its directory
        origin = "graph" if service.code_path else "name" if findable else None
        deciding = self.deciding_line(service.directory) if origin else None
        ruled = set(deciding.owners) if deciding else set()
        who, ruled_who = {o.identity for o in graph}, {o.identity for o in ruled}
        agreement = ("none" if not who and not ruled_who else "graph-only" if not ruled_who else
                     "codeowners-only" if not who else "agree" if who == ruled_who else "disagree")
        return Expected(frozenset(o.iri for o in graph), service.directory if origin else None, origin, deciding,
                        agreement, service.rule == "stale")


def _weighted(rng: random.Random, choices: Sequence[tuple[str, float]]) -> str:
    return rng.choices([c for c, _ in choices], [w for _, w in choices])[0]


def _names(rng: random.Random, count: int, make, taken: set[str]) -> list[str]:
    found: list[str] = []
    while len(found) < count:
        name = make()
        if slug(name) not in taken and not set(slug(name).split("-")) & {"the", "team", "squad", "group", "dept"}:
            taken.add(slug(name))
            found.append(name)
    return found


def build(services: int = 2000, seed: int = 7) -> Organisation:
    """The organisation for (services, seed): the same arguments give the same organisation. ~services/10
    teams, ~services·0.4 people; cheap (well under a second for 2,000 services)."""
    rng = random.Random(seed)
    words = synthetic_graph.pseudo_words(max(200, services // 4), seed + 1)
    taken: set[str] = set()
    team_names = _names(rng, max(6, services // 10), lambda: f"{rng.choice(words)} {rng.choice(TEAM_FUNCTIONS)}", taken)
    teams = [Owner(f"team:{slug(n)}", f"{n} {'squad' if rng.random() < 0.15 else 'team'}",
                   f"@{ORG}/{slug(n)}{'-team' if rng.random() < 0.15 else ''}") for n in team_names]
    person_names = _names(rng, max(10, services * 2 // 5), lambda: f"{rng.choice(FIRST_NAMES)} {rng.choice(words)}",
                          taken)
    people = [Owner(f"person:{slug(n)}", n, f"{slug(n).replace('-', '.')}@{ORG}.example" if rng.random() < 0.05
                    else f"@{slug(n)}") for n in person_names]
    labels = _names(rng, services, lambda: f"{rng.choice(words)} {rng.choice(SERVICE_NOUNS)}", taken)
    group_teams = {group: rng.choice(teams) for group, broad in GROUPS.items() if broad}
    made: list[Service] = []
    parents: list[Service] = []  # services directly under services/, which others may nest under
    for label in labels:
        roll = rng.random()
        group = rng.choice(list(GROUPS))
        if roll < 0.55 or (roll >= 0.9 and not parents):
            directory = f"services/{slug(label)}/"
        elif roll < 0.9:
            directory = f"{group}/{slug(label)}/"
        else:
            directory = f"{rng.choice(parents).directory}{slug(label)}/"
        top = directory.split("/")[0]
        team = group_teams[top] if top in group_teams and rng.random() < 0.4 else rng.choice(teams)
        rule = _weighted(rng, RULES)
        if rule == "shadowed" and (top not in group_teams or directory.count("/") != 2):
            rule = "own"
        former = rng.choice([t for t in teams if t != team]) if rule in ("stale", "fixed") else None
        owned_by = _weighted(rng, OWNED) if rule in ("stale", "fixed") or rng.random() < 0.85 else None
        made.append(Service(label, directory, team, rng.choice(people) if rng.random() < 0.4 else None, owned_by,
                            rng.random() < 0.8, rule, former))
        if directory.count("/") == 2 and top == "services":
            parents.append(made[-1])
    organisation = Organisation(seed, teams, people, made, _codeowners(rng, made, teams, people, group_teams),
                                *_dependencies(rng, made), _memories(rng, made, people))
    organisation.decoys = _decoys(rng, made, teams, people)
    return organisation


def _own_line(rng: random.Random, service: Service, owners: Sequence[Owner], kind: str, form: str | None = None) -> Line:
    form = form or _weighted(rng, FORMS)
    pattern = form.format(dir=service.directory, bare=service.directory.rstrip("/"), slug=service.slug)
    return Line(f"{pattern:<40} {' '.join(o.handle for o in owners)}", kind, pattern, tuple(owners))


def _codeowners(rng: random.Random, services: Sequence[Service], teams: Sequence[Owner], people: Sequence[Owner],
                group_teams: Mapping[str, Owner]) -> list[Line]:
    """The file, top to bottom: the catch-all, rules a later broad rule shadows, broad rules, each service's
    own line (nested ones after their parents), subdirectories, fixes, then file and extension rules and
    malformed lines. A line's owners are the service's team, with its lead on most lines."""
    def comment(text: str) -> Line:
        return Line(f"# {text}", "comment")

    def rule(pattern: str, kind: str, *owners: Owner) -> Line:
        return Line(f"{pattern:<40} {' '.join(o.handle for o in owners)}".rstrip(), kind, pattern, owners)

    def owners_of(service: Service) -> list[Owner]:
        return [service.team, *([service.lead] if service.lead and rng.random() < 0.7 else [])]

    lines = [comment(f"CODEOWNERS of the {ORG} monorepo (generated). The last matching line wins."),
             rule("*", "catch-all", rng.choice(teams)), comment("Legacy rules, kept from before the reorganisation.")]
    lines += [_own_line(rng, s, owners_of(s), "shadowed", "/{dir}") for s in services if s.rule == "shadowed"]
    lines += [comment("Broad rules first.")] + [rule(f"/{g}/", "group", t) for g, t in group_teams.items()]
    lines += [rule("/services/", "services", rng.choice(teams)), rule("/docs/", "subdirectory", rng.choice(teams))]
    lines.append(comment("One line per service."))
    own = [s for s in services if s.rule in ("own", "stale", "fixed", "malformed")]
    rng.shuffle(own)
    for service in sorted(own, key=lambda s: s.directory.count("/")):  # a parent's line before its nested ones
        if service.rule == "malformed":  # an owner without its "@": GitHub skips the line
            lines.append(Line(f"/{service.directory:<39} {ORG}-{slug(service.team.label)}", "malformed"))
        else:
            lines.append(_own_line(rng, service, [service.former] if service.former else owners_of(service),
                                   service.rule))
        if rng.random() < 0.1:
            lines.append(rule(f"/{service.directory}models/", "subdirectory", rng.choice(teams)))
    lines.append(comment("Moved in the 2025 reorganisation."))
    lines += [_own_line(rng, s, owners_of(s), "fixed", "/{dir}") for s in services if s.rule == "fixed"]
    lines += [comment("Files and extensions: these never decide a directory."),
              rule("*.sql", "extension", rng.choice(teams)), rule("**/migrations/", "anywhere", rng.choice(teams)),
              rule("/vendor/", "unowned")]
    for service in rng.sample(list(services), max(1, len(services) // 20)):
        lines.append(rule(f"/{service.directory}*.sql", "extension", rng.choice(people)))
        lines.append(rule(f"/{service.directory}README.md", "file", rng.choice(people)))
    lines += [comment("Malformed on purpose."),
              Line(f"!/{services[0].directory:<39} @{ORG}/{slug(teams[0].label)}", "malformed"),
              Line(f"/services/[ab]*/{'':<24} @{ORG}/{slug(teams[0].label)}", "malformed"),
              Line(teams[0].handle, "malformed"), Line(f"/tools/{'':<33} ada@", "malformed")]
    return lines


def _dependencies(rng: random.Random, services: Sequence[Service]) -> tuple[list[tuple[str, str, str]], list[str]]:
    """Each service depends on 1-5 others, half of them also on one of a few hubs; a few 3-cycles."""
    names = [s.label for s in services]
    hubs = rng.sample(names, max(2, len(names) // 400))
    edges: dict[tuple[str, str], str] = {}

    def depend(a: str, b: str, predicate: str | None = None) -> None:
        if a != b:
            edges.setdefault((a, b), predicate or _weighted(rng, DEPENDS))

    for name in names:
        for target in rng.sample(names, min(len(names), 1 + min(int(rng.expovariate(0.7)), 4))):
            depend(name, target)
        if name not in hubs and rng.random() < 0.5:
            depend(name, rng.choice(hubs))
    plain = [n for n in names if n not in hubs]
    for _ in range(max(3, len(names) // 100)):
        a, b, c = rng.sample(plain, 3)
        depend(a, b, "depends on"), depend(b, c, "calls"), depend(c, a, "calls")
    written = [(b, p, a) if p in PASSIVE else (a, p, b) for (a, b), p in edges.items()]
    return written, hubs


def _memories(rng: random.Random, services: Sequence[Service], people: Sequence[Owner]) -> list[MemoryRecord]:
    """Decisions and failure patterns about 30% of the services, 1-3 each, dated 2019-2025."""
    records: list[MemoryRecord] = []
    for service in services:
        if rng.random() >= 0.3:
            continue
        for _ in range(rng.randint(1, 3)):
            number, author = len(records) + 1, rng.choice(people).label
            date = f"{rng.randint(2019, 2025)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
            other = rng.choice(services).label
            if rng.random() < 0.6:
                decision = rng.choice(DECISIONS)
                records.append(MemoryRecord(
                    kind="decision", title=f"ADR {number:04d}: {service.label} {decision}", line=1, author=author,
                    date=date, status=rng.choice(("accepted",) * 4 + ("superseded",)),
                    text=f"{service.label} {decision}, as agreed with the owners of {other}.",
                    fields={"rationale": f"{service.label} needed it to keep its latency targets."},
                    relations={"why": (service.label,), "concerns": (other,)}))
            else:
                failure = rng.choice(FAILURES)
                records.append(MemoryRecord(
                    kind="failure-pattern", title=f"Post-mortem {number:04d}: {service.label} outage",
                    line=1, author=author, date=date, text=f"{service.label} stopped serving when {other} {failure}.",
                    fields={"root-cause": f"{other} {failure}.", "impact": "Requests failed for two hours."},
                    relations={"affected": (service.label,), "caused-by": (other,)}))
    return records


def _decoys(rng: random.Random, services: Sequence[Service], teams: Sequence[Owner],
            people: Sequence[Owner]) -> list[tuple[str, str, str]]:
    """Facts that name a service with a team or person without making them its owner, and a division each
    service is part of (so every service exists in the graph whatever else is said about it)."""
    facts = [(s.label, "is part of", f"{s.directory.split('/')[0].capitalize()} division") for s in services]
    for service in services:
        if rng.random() < 0.1:
            facts.append((rng.choice(teams).label, "uses", service.label))
        if rng.random() < 0.1:
            facts.append((rng.choice(people).label, "works with", service.label))
    return facts


# ---------------------------------------------------------------- triples, in the extractors' shapes


def _fact(s: str, p: str, o: str) -> Triple:
    return Triple(s=iri(entity_uri(s)), p=iri(relation_uri(p)), o=iri(entity_uri(o)))


def stated(document: str, index: int, facts: Sequence[tuple[str, str, str]]) -> list[Triple]:
    """One chunk's facts as kg-extract writes them: the facts, a label for each entity and predicate they
    name, the chunk (as the chunker writes it), and the subgraph that contains the facts and mentions
    the entities."""
    triples = [_fact(*f) for f in facts]
    names = {entity_uri(n): n for s, _, o in facts for n in (s, o)}
    names |= {relation_uri(p): p for _, p, _ in facts}
    chunk = chunk_uri(document, index, 2000, 100)
    return [*triples, *(Triple(s=iri(u), p=RDFS.label, o=literal(n)) for u, n in names.items()),
            *chunk_triples(chunk, document, index=index, char_offset=(index - 1) * 1900, char_length=2000,
                           chunk_size=2000, chunk_overlap=100, component=CHUNKER, timestamp=TIME),
            *subgraph_triples(subgraph_uri(chunk, "offline"), chunk, triples, component=EXTRACTOR, timestamp=TIME,
                              extractor="offline", mentions=[u for u in names if u.startswith(entity_uri(""))])]


def _described(document: str, title: str, mime_type: str = "text/markdown") -> list[Triple]:
    return document_triples(document, title=title, mime_type=mime_type, date=TIME)


def stated_documents(name: str, title: str, facts: Sequence[tuple[str, str, str]]) -> Iterator[list[Triple]]:
    """Facts spread over documents of CHUNKS_PER_DOCUMENT chunks of FACTS_PER_CHUNK facts."""
    per_document = FACTS_PER_CHUNK * CHUNKS_PER_DOCUMENT
    for number, start in enumerate(range(0, len(facts), per_document), start=1):
        document = f"{DOCUMENT}{name}-{number:06d}"
        part = facts[start:start + per_document]
        out = _described(document, f"{title} {number}")
        for index, first in enumerate(range(0, len(part), FACTS_PER_CHUNK), start=1):
            out += stated(document, index, part[first:first + FACTS_PER_CHUNK])
        yield out


def organisation_documents(org: Organisation) -> Iterator[list[Triple]]:
    """Every document about the organisation, as its triples: CODEOWNERS, the service catalogue (ownership
    and lead edges), code paths, architecture notes (dependencies), decisions and post-mortems."""
    document = f"{DOCUMENT}codeowners"
    parsed = codeowners.parse(org.codeowners_text)
    yield [*_described(document, "CODEOWNERS", CODEOWNERS),
           *with_provenance(document, codeowners_facts(document, parsed), timestamp=TIME, extractor="offline"),
           *problem_triples(document, parsed.problems, timestamp=TIME)]
    owned = []
    for s in org.services:
        if s.owned_by:
            owned.append((s.label, s.owned_by, s.team.label) if s.owned_by in PASSIVE else
                         (s.team.label, s.owned_by, s.label))
        if s.lead:
            owned.append((s.lead.label, "leads", s.label))
    yield from stated_documents("catalogue", "Service catalogue", owned + org.decoys)
    with_paths = [s for s in org.services if s.code_path]
    for first in range(0, len(with_paths), 200):
        document = f"{DOCUMENT}code-paths-{first // 200 + 1:04d}"
        paths = [CodePath(n, s.label, s.directory) for n, s in enumerate(with_paths[first:first + 200], start=1)]
        yield [*_described(document, f"Where the code lives {first // 200 + 1}"),
               *with_provenance(document, code_path_facts(paths), timestamp=TIME, extractor="offline")]
    yield from stated_documents("architecture", "Architecture notes", org.dependencies)
    for number, record in enumerate(org.memories, start=1):
        document = f"{DOCUMENT}memory-{number:05d}"
        yield [*_described(document, record.title),
               *with_provenance(document, memory_facts(document, [record]), timestamp=TIME, extractor="offline")]


def filler_documents(edges: int, seed: int, reserved: set[str]) -> Iterator[list[Triple]]:
    """`edges` facts about other entities (bench/synthetic_graph.py's skewed graph; any edge naming an
    entity of the organisation is left out), in kg-extract's shape."""
    if edges <= 0:
        return
    graph = synthetic_graph.build(edges, seed)
    clash = np.array([slug(e) in reserved for e in graph.entities])
    keep = np.flatnonzero(~(clash[graph.s] | clash[graph.o]))
    facts = ((graph.entities[graph.s[k]], graph.predicates[graph.p[k]], graph.entities[graph.o[k]])
             for k in keep.tolist())
    per_document = FACTS_PER_CHUNK * CHUNKS_PER_DOCUMENT
    for number in itertools.count(1):
        batch = list(itertools.islice(facts, per_document))
        if not batch:
            return
        yield from stated_documents(f"filler-{number:06d}", "Notes", batch)


def counted_facts(triples: Sequence[Triple]) -> int:
    """Facts as this benchmark counts them: default-graph triples other than labels."""
    return sum(1 for t in triples if not t.g and t.p != RDFS.label)


def reserved_names(org: Organisation) -> set[str]:
    return {slug(n) for n in [*(o.label for o in org.teams + org.people), *(s.label for s in org.services),
                              *(o.handle.rsplit("/", 1)[-1].lstrip("@") for o in org.teams + org.people)]}


def documents(org: Organisation, facts: int) -> Iterator[list[Triple]]:
    """The organisation's documents, then filler documents until about `facts` facts are stated."""
    distinct: set[tuple[str, str, str]] = set()  # owners and entities recur across rules and documents
    for triples in organisation_documents(org):
        distinct.update((str(t.s), str(t.p), str(t.o)) for t in triples if not t.g and t.p != RDFS.label)
        yield triples
    stated_so_far = len(distinct)
    per_document = FACTS_PER_CHUNK * CHUNKS_PER_DOCUMENT
    rest = facts - stated_so_far
    yield from filler_documents(round(rest * per_document / (per_document + 5)), org.seed, reserved_names(org))


def nquads(triples: Sequence[Triple]) -> str:
    return ox.serialize([quad_to_ox(t) for t in triples], format=ox.RdfFormat.N_QUADS).decode()


# ---------------------------------------------------------------- --check


def check(services: int = 80, facts: int = 20_000, seed: int = 7) -> list[str]:
    """Build a tiny organisation and assert its truth is consistent, including with the project's CODEOWNERS
    parser on every directory whose owners the truth decides; returns what was checked."""
    org = build(services, seed)
    assert build(services, seed).codeowners_text == org.codeowners_text, "not deterministic"
    assert len({s.slug for s in org.services}) == len(org.services), "service slugs repeat"
    assert len({s.directory for s in org.services}) == len(org.services), "directories repeat"
    parsed = codeowners.parse(org.codeowners_text)
    malformed = [n for n, line in enumerate(org.lines, start=1) if line.kind == "malformed"]
    assert [p.line for p in parsed.problems] == malformed, (parsed.problems, malformed)
    expected = {s.label: org.expected(s) for s in org.services}
    decided = 0
    for service in org.services:
        truth = expected[service.label]
        assert not truth.stale or (truth.agreement == "disagree" and service.former != service.team), service
        if truth.path is None:
            continue
        rule = parsed.directory_rule(truth.path)
        assert truth.deciding is not None and rule is not None, service
        assert rule.line == org.line_number(truth.deciding), (service, rule, truth.deciding)
        assert {o.handle for o in rule.owners} == {o.handle for o in truth.deciding.owners}, service
        decided += 1
    kinds = Counter(s.rule for s in org.services)
    assert all(kinds[k] for k in ("own", "stale", "fixed", "malformed", "none")), kinds
    hubs = org.dependants(org.hubs)
    assert min(hubs) >= 2, hubs
    counted, quads = 0, 0
    for triples in documents(org, facts):
        counted += counted_facts(triples)
        quads += len(nquads(triples).splitlines())
    own = sum(counted_facts(triples) for triples in organisation_documents(org))
    assert abs(counted - max(facts, own)) < 0.05 * max(facts, own), (counted, facts, own)
    agreements = Counter(t.agreement for t in expected.values())
    return [f"{len(org.services)} services, {len(org.teams)} teams, {len(org.people)} people; rules {dict(kinds)}",
            (f"CODEOWNERS: {len(org.lines)} lines, {len(parsed.rules)} rules, {len(parsed.problems)} malformed "
            f"(all reported by the parser); the parser agrees with the truth on all {decided} decided directories"),
            f"agreement truth: {dict(agreements)}; every stale line gives 'disagree'",
            f"{len(org.dependencies)} dependency edges, hubs with {hubs} dependants",
            f"{counted:,} facts stated (asked {facts:,}), {quads:,} quads; every triple serialises"]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    p.add_argument("--check", action="store_true", help="build a tiny organisation and assert its truth is consistent")
    p.add_argument("--services", type=int, default=None, help="services in the organisation [2000; --check: 80]")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--codeowners", action="store_true", help="print the generated CODEOWNERS file")
    args = p.parse_args()
    if args.check:
        started = time.perf_counter()
        for line in check(args.services or 80, seed=args.seed):
            print(line)
        print(f"check passed in {time.perf_counter() - started:.1f} s")
        return
    org = build(args.services or 2000, args.seed)
    if args.codeowners:
        sys.stdout.write(org.codeowners_text)
        return
    print(f"{len(org.services):,} services, {len(org.teams):,} teams, {len(org.people):,} people, "
          f"{len(org.lines):,} CODEOWNERS lines, {len(org.dependencies):,} dependency edges, "
          f"{len(org.memories):,} memory records; --codeowners prints the file, --check checks the truth")


if __name__ == "__main__":
    main()
