"""The canonical relations the graph features ask about, and how a sentence's verb maps onto them.

A sentence says "stores user shopping carts in Valkey" or "is hosted in the EKS cluster"; the dependency
tree asks for "writes to" and "runs on". Every extractor (the parser's clauses, Markdown structure, an LLM's
predicates) names its relation with the verb it read and its preposition, and `canonical` turns that into one
predicate of this vocabulary, in one direction:

- dependencies, stated as "dependent —predicate→ dependency": depends on, calls, uses, reads from, writes to,
  publishes to, consumes from, runs on;
- ownership, stated as "thing —predicate→ owner", whatever the voice ("Ana leads Ledger" and "Ledger is led
  by Ana" are one slot): is owned by, is maintained by, is led by, is operated by, has on-call;
- lifecycle, with a literal value or a successor: version, status, is replaced by, supersedes.

Verbs outside the vocabulary keep their own phrase ("was founded by"). The sentence's words are kept beside the
canonical predicate as the phrase a person reads."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Family = Literal["dependency", "ownership", "lifecycle", "alias", "other"]


@dataclass(frozen=True, slots=True)
class Canonical:
    """A canonical predicate: its label (the predicate IRI is minted from it), its family, and whether the
    relation as the sentence states it must be turned round to read "subject —label→ object"."""

    label: str
    family: Family
    reverse: bool = False


DEPENDS_ON, CALLS, USES, READS_FROM, WRITES_TO = "depends on", "calls", "uses", "reads from", "writes to"
PUBLISHES_TO, CONSUMES_FROM, RUNS_ON = "publishes to", "consumes from", "runs on"
OWNED_BY, MAINTAINED_BY, LED_BY, OPERATED_BY, ON_CALL = (
    "is owned by", "is maintained by", "is led by", "is operated by", "has on-call")
VERSION, STATUS, REPLACED_BY, SUPERSEDES, ALIAS = "version", "status", "is replaced by", "supersedes", "is also known as"
KIND_OF = "is a"  # "Billing is a payments service": the category a thing belongs to, not a relation to a thing
WRITTEN_IN = "is written in"
CODE_PATH = "code path"  # where an entity's code lives in its repository: stored as tg:codePath, a value

DEPENDENCY_LABELS = (DEPENDS_ON, CALLS, USES, READS_FROM, WRITES_TO, PUBLISHES_TO, CONSUMES_FROM, RUNS_ON)
OWNERSHIP_LABELS = (OWNED_BY, MAINTAINED_BY, LED_BY, OPERATED_BY, ON_CALL)
# One value at a time: a later statement supersedes an earlier one (the temporal keeper's functional predicates).
SINGLE_VALUED = (OWNED_BY, LED_BY, VERSION, STATUS, WRITTEN_IN)

_ACTIVE: dict[str, tuple[str, Family]] = {}  # "verb lemma|preposition" -> (label, family); "" preposition: direct


def _add(label: str, family: Family, *forms: str) -> None:
    for form in forms:
        _ACTIVE[form] = (label, family)


_add(DEPENDS_ON, "dependency", "depend|on", "depend|upon", "rely|on", "rely|upon", "need|", "require|",
     "hinge|on")
_add(CALLS, "dependency", "call|", "invoke|", "query|", "request|", "request|from", "contact|",
     "talk|to", "talk|with", "connect|to", "connect|with", "proxy|", "proxy|to", "route|to", "forward|to",
     "communicate|with", "interact|with", "ping|")
_add(USES, "dependency", "use|", "utilize|", "utilise|", "leverage|", "employ|", "integrate|with", "adopt|",
     "embed|", "wrap|", "bundle|", "import|")
_add(READS_FROM, "dependency", "read|from", "read|", "fetch|from", "retrieve|from", "pull|from", "load|from",
     "get|from", "obtain|from", "download|from", "sync|from", "copy|from", "scrape|", "scrape|from",
     "look|up", "lookup|in", "read|in")
_add(WRITES_TO, "dependency", "write|to", "write|into", "store|in", "store|into", "store|to",
     "save|to", "save|in", "persist|to", "persist|in", "insert|into", "cache|in", "keep|in", "put|in",
     "put|into", "upload|to", "record|in", "back|up")
_add(PUBLISHES_TO, "dependency", "publish|to", "publish|on", "send|to", "send|via", "send|through",
     "send|over", "write|onto", "publish|via", "emit|via", "emit|on", "emit|to", "produce|to",
     "push|to", "post|to", "export|to", "ship|to", "deliver|to", "stream|to", "log|to", "notify|",
     "enqueue|in", "enqueue|to", "queue|in")
_add(CONSUMES_FROM, "dependency", "consume|from", "consume|", "subscribe|to", "receive|from", "listen|to",
     "listen|on", "poll|", "read|off", "dequeue|from", "receive|via", "receive|through", "receive|over",
     "receive|by", "consume|via", "get|from", "pick|up")
_add(RUNS_ON, "dependency", "run|on", "run|in", "run|inside", "run|within", "deploy|to", "deploy|on",
     "deploy|in", "deploy|into", "host|on", "host|in", "host|by", "schedule|on")
# Ownership verbs, active: "Ana leads Ledger" -> (Ledger, is led by, Ana).
_add(OWNED_BY, "ownership", "own|", "be responsible|for", "be accountable|for", "be owner|of", "take|over")
_add(MAINTAINED_BY, "ownership", "maintain|", "look|after", "care|for", "be maintainer|of",
     "steward|")
_add(LED_BY, "ownership", "lead|", "head|", "be lead|of", "be leader|of", "chair|", "co|lead")
_add(OPERATED_BY, "ownership", "operate|", "run|", "manage|", "administer|", "administrate|")
_add(ON_CALL, "ownership", "be on call|for", "be on-call|for", "cover|")
_add(REPLACED_BY, "lifecycle", "replace|", "supplant|", "succeed|")
# Said only in the passive: "accounting was written in Go", "implemented in Rust".
_PASSIVE_ONLY: dict[str, tuple[str, Family]] = {
    "write|in": (WRITTEN_IN, "lifecycle"), "implement|in": (WRITTEN_IN, "lifecycle"), "code|in": (WRITTEN_IN, "lifecycle"),
    "build|with": (USES, "dependency"), "build|on": (DEPENDS_ON, "dependency"), "back|by": (DEPENDS_ON, "dependency"),
    "power|by": (USES, "dependency"), "store|in": (WRITES_TO, "dependency"), "keep|in": (WRITES_TO, "dependency"),
    "persist|in": (WRITES_TO, "dependency"), "cache|in": (WRITES_TO, "dependency"), "host|in": (RUNS_ON, "dependency"),
    "host|on": (RUNS_ON, "dependency"), "deploy|to": (RUNS_ON, "dependency"), "deploy|on": (RUNS_ON, "dependency"),
    "deploy|in": (RUNS_ON, "dependency"), "run|on": (RUNS_ON, "dependency"), "run|in": (RUNS_ON, "dependency"),
    "know|as": (ALIAS, "alias"), "refer|as": (ALIAS, "alias"),  # "Ledger, also known as LGR, …"
}
_add(SUPERSEDES, "lifecycle", "supersede|", "obsolete|")

# Relations whose active sentence names the object first in our direction: "Ana leads Ledger" is
# (Ledger, is led by, Ana); "B replaces A" is (A, is replaced by, B).
_ACTIVE_REVERSED = frozenset({*OWNERSHIP_LABELS, REPLACED_BY})


def canonical(lemma: str, preposition: str = "", *, passive: bool = False) -> Canonical | None:
    """The canonical relation of a verb (its lemma, lower case; a copula with its complement as
    "be responsible") with the preposition that introduces the object ("" for a direct object, "by" for a
    passive's agent), read in the voice the sentence uses. None when the verb is outside the vocabulary.

    >>> canonical("store", "in"), canonical("own", "by", passive=True).label, canonical("lead").reverse
    (Canonical(label='writes to', family='dependency', reverse=False), 'is owned by', True)
    >>> canonical("host", "in", passive=True).label, canonical("use", "by", passive=True)
    ('runs on', Canonical(label='uses', family='dependency', reverse=True))
    """
    lemma, preposition = " ".join(lemma.lower().split()), preposition.lower()
    if passive and f"{lemma}|{preposition}" in _PASSIVE_ONLY:  # "X is hosted in Y", "X was written in Go"
        label, family = _PASSIVE_ONLY[f"{lemma}|{preposition}"]
        return Canonical(label, family)
    agent = passive and preposition == "by"  # "X is used by Y": the agent does it
    found = _ACTIVE.get(f"{lemma}|" if agent else f"{lemma}|{preposition}")
    if found is None or (passive and not agent):
        return None  # outside the vocabulary, or a passive whose preposition says something else
    label, family = found
    return Canonical(label, family, reverse=(label in _ACTIVE_REVERSED) != agent)


def verbs() -> frozenset[str]:
    """The one-word verb lemmas of the vocabulary ("store", "depend", "own" …)."""
    return frozenset(key.split("|")[0] for key in _ACTIVE if " " not in key.split("|")[0])


def knows(lemma: str, preposition: str = "") -> bool:
    """Whether "lemma|preposition" is a form of the vocabulary (a particle verb such as "look up" too)."""
    return f"{lemma}|{preposition}" in _ACTIVE


def family_of(label: str) -> Family:
    """The family of a canonical label ("other" for any other predicate)."""
    if label in DEPENDENCY_LABELS:
        return "dependency"
    if label in OWNERSHIP_LABELS:
        return "ownership"
    if label in (VERSION, STATUS, REPLACED_BY, SUPERSEDES, WRITTEN_IN, CODE_PATH):
        return "lifecycle"
    return "alias" if label == ALIAS else "other"


# Table headers and `Key:` fields that state a relation of the row's (or document's) subject.
FIELD_RELATIONS: dict[str, str] = {
    "owner": OWNED_BY, "owners": OWNED_BY, "owned by": OWNED_BY, "owning team": OWNED_BY, "team": OWNED_BY,
    "owner team": OWNED_BY, "service owner": OWNED_BY, "product owner": OWNED_BY, "responsible team": OWNED_BY,
    "responsible": OWNED_BY, "accountable": OWNED_BY,
    "maintainer": MAINTAINED_BY, "maintainers": MAINTAINED_BY, "maintained by": MAINTAINED_BY,
    "codeowners": MAINTAINED_BY, "contacts": MAINTAINED_BY, "contact": MAINTAINED_BY,
    "lead": LED_BY, "tech lead": LED_BY, "technical lead": LED_BY, "led by": LED_BY, "leads": LED_BY,
    "engineering lead": LED_BY, "team lead": LED_BY,
    "on-call": ON_CALL, "on call": ON_CALL, "oncall": ON_CALL, "on-call rotation": ON_CALL, "pager": ON_CALL,
    "escalation": ON_CALL,
    "depends on": DEPENDS_ON, "dependencies": DEPENDS_ON, "dependency": DEPENDS_ON, "requires": DEPENDS_ON,
    "upstream": DEPENDS_ON, "upstreams": DEPENDS_ON, "upstream dependencies": DEPENDS_ON,
    "calls": CALLS, "talks to": CALLS, "clients of": CALLS, "downstream calls": CALLS,
    "uses": USES, "tech stack": USES, "stack": USES, "built with": USES,
    "datastore": WRITES_TO, "datastores": WRITES_TO, "database": WRITES_TO, "databases": WRITES_TO,
    "storage": WRITES_TO, "data store": WRITES_TO, "data stores": WRITES_TO, "store": WRITES_TO,
    "reads from": READS_FROM, "writes to": WRITES_TO,
    "publishes to": PUBLISHES_TO, "publishes": PUBLISHES_TO, "produces": PUBLISHES_TO, "emits": PUBLISHES_TO,
    "consumes": CONSUMES_FROM, "consumes from": CONSUMES_FROM, "subscribes to": CONSUMES_FROM,
    "runs on": RUNS_ON, "platform": RUNS_ON, "hosting": RUNS_ON, "hosted on": RUNS_ON, "deployed to": RUNS_ON,
    "runtime": RUNS_ON,
    "version": VERSION, "current version": VERSION, "release": VERSION, "latest version": VERSION,
    "status": STATUS, "state": STATUS, "lifecycle": STATUS, "stage": STATUS,
    "replaced by": REPLACED_BY, "superseded by": REPLACED_BY, "successor": REPLACED_BY,
    "supersedes": SUPERSEDES, "replaces": SUPERSEDES,
    "aka": ALIAS, "also known as": ALIAS, "alias": ALIAS, "aliases": ALIAS,
    "repo path": CODE_PATH, "repository path": CODE_PATH, "code path": CODE_PATH, "code": CODE_PATH,
    "source path": CODE_PATH, "directory": CODE_PATH, "path": CODE_PATH,
    "language": WRITTEN_IN, "languages": WRITTEN_IN, "implementation language": WRITTEN_IN,
    "written in": WRITTEN_IN, "programming language": WRITTEN_IN,
}
# Headings whose list items are dependencies of the section's subject ("## Dependencies" under "# Billing"),
# or, for "dependents"/"consumers"/"downstream", things that depend on it.
HEADING_RELATIONS: dict[str, tuple[str, bool]] = {
    "dependencies": (DEPENDS_ON, False), "depends on": (DEPENDS_ON, False), "upstream": (DEPENDS_ON, False),
    "upstream dependencies": (DEPENDS_ON, False), "upstream services": (DEPENDS_ON, False),
    "requirements": (DEPENDS_ON, False), "prerequisites": (DEPENDS_ON, False),
    "external dependencies": (DEPENDS_ON, False), "service dependencies": (DEPENDS_ON, False),
    "runtime dependencies": (DEPENDS_ON, False), "calls": (CALLS, False), "talks to": (CALLS, False),
    "outbound calls": (CALLS, False), "uses": (USES, False), "tech stack": (USES, False),
    "technology stack": (USES, False), "built with": (USES, False),
    "datastores": (WRITES_TO, False), "data stores": (WRITES_TO, False), "storage": (WRITES_TO, False),
    "databases": (WRITES_TO, False), "publishes": (PUBLISHES_TO, False), "produces": (PUBLISHES_TO, False),
    "events published": (PUBLISHES_TO, False), "consumes": (CONSUMES_FROM, False),
    "events consumed": (CONSUMES_FROM, False), "subscriptions": (CONSUMES_FROM, False),
    "dependents": (DEPENDS_ON, True), "consumers": (DEPENDS_ON, True), "downstream": (DEPENDS_ON, True),
    "downstream services": (DEPENDS_ON, True), "clients": (DEPENDS_ON, True), "used by": (USES, True),
    "called by": (CALLS, True),
    "owners": (OWNED_BY, False), "ownership": (OWNED_BY, False), "owner": (OWNED_BY, False),
    "maintainers": (MAINTAINED_BY, False), "maintainer": (MAINTAINED_BY, False),
    "team": (OWNED_BY, False), "contacts": (MAINTAINED_BY, False), "points of contact": (MAINTAINED_BY, False),
    "leads": (LED_BY, False), "team leads": (LED_BY, False), "leadership": (LED_BY, False),
    "co-leads": (LED_BY, False), "approvers": (MAINTAINED_BY, False), "reviewers": (MAINTAINED_BY, False),
    "committers": (MAINTAINED_BY, False), "core team": (MAINTAINED_BY, False),
    "on-call": (ON_CALL, False), "on call": (ON_CALL, False),
}
# The relation phrases an introducing sentence may name ("the new team leads will be:", "it depends on:").
HEADING_ORDER = {phrase: label for phrase, (label, _) in HEADING_RELATIONS.items()}
