"""The query router: what kind of question this is, and so which strategies answer it and how far
the graph walk goes. Rules first (word patterns, no model); with an LLM the model classifies and
the rules stay the fallback. The decision and how it was made go into the trace."""

from __future__ import annotations

import re
from dataclasses import dataclass

QUERY_TYPES = ("dependency", "ownership", "factual", "strategic", "vague")

# Which strategies each type runs (all of them are fused), and how many hops the graph walk takes.
PLANS: dict[str, tuple[tuple[str, ...], int]] = {
    "dependency": (("graph", "sparql", "bm25", "vector"), 3),
    "ownership": (("graph", "sparql", "bm25", "vector"), 2),
    "factual": (("vector", "bm25", "graph", "sparql"), 2),
    "strategic": (("vector", "bm25", "graph"), 1),
    "vague": (("vector", "bm25"), 1),
}

_DEPENDENCY = re.compile(
    r"\b(depend\w*|rel(?:y|ies|ied) on|uses?|using|used by|calls?|called by|imports?|requires?|needs?|"
    r"upstream|downstream|suppl(?:y|ies|ier)|buys?|bought|feeds?|runs on|stores? data in|connects? to)\b", re.I)
_OWNERSHIP = re.compile(
    r"\b(own\w*|maintain\w*|responsible|operat\w*|leads?|led by|manag\w*|chief|head of|found\w*|"
    r"reports? to|in charge)\b", re.I)
_STRATEGIC = re.compile(
    r"\b(overview|structured?|organi[sz]ed|architecture|landscape|risks?|strateg\w*|summar\w*|"
    r"big picture|top \d+|main (?:themes|parts|components))\b", re.I)
_WORD = re.compile(r"[A-Za-z0-9][\w'-]*")
_FILLER = set("""a an the is are was were do does did what which who whom whose how why when where of in on at to
for with about tell me please something anything stuff thing things it this that""".split())

ROUTER_SYSTEM = ("Classify the user's question about a knowledge graph. Reply with exactly one word: "
                 "dependency (what something depends on, uses, calls or needs), ownership (who owns, runs, "
                 "maintains or leads something), factual (a specific fact), strategic (a corpus-wide overview, "
                 "structure or risks) or vague (too unspecific to look anything up).")


@dataclass(frozen=True, slots=True)
class Route:
    query_type: str
    strategies: tuple[str, ...]
    hops: int
    method: str  # how the type was decided, for the trace


def route_by_rules(question: str) -> Route:
    """Word patterns in a fixed order: ownership and dependency words name the relation asked about,
    so they win over overview words; a question of two content words or fewer is vague.

    >>> route_by_rules("What does Helios Grid depend on?").query_type
    'dependency'
    >>> route_by_rules("Who maintains the Ledger Store?").query_type
    'ownership'
    >>> route_by_rules("stuff?").query_type
    'vague'
    """
    content = [w for w in _WORD.findall(question) if w.lower() not in _FILLER]
    for query_type, pattern in (("ownership", _OWNERSHIP), ("dependency", _DEPENDENCY), ("strategic", _STRATEGIC)):
        found = pattern.search(question)
        if found:
            return plan(query_type, f"rules: '{found.group(0)}' marks a {query_type} question")
    if len(content) <= 2:
        return plan("vague", f"rules: {len(content)} content word(s) is too little to look up precisely")
    return plan("factual", "rules: no dependency, ownership or overview words; a factual question")


def parse_route(reply: str) -> str | None:
    """The query type an LLM's reply names first, if any."""
    found = re.search(r"\b(" + "|".join(QUERY_TYPES) + r")\b", reply.lower())
    return found.group(1) if found else None


def plan(query_type: str, method: str) -> Route:
    strategies, hops = PLANS[query_type]
    return Route(query_type, strategies, hops, method)
