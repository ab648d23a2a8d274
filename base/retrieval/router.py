"""The query router: what kind of question this is, and so which strategies answer it and how far
the graph walk goes. Rules first (word patterns, no model); with an LLM the model classifies and
the rules stay the fallback. The decision and how it was made go into the trace.

The rules look for the relation a question *asks about*, not any relation it mentions: in "Who
founded the company that owns Instagram?" the asked relation is "founded", and "owns" only
describes the company. So a relation counts when it is attached to the question word ("who owns",
"which services call", "what does X depend on", "X is maintained by whom"), and words inside a
relative clause do not. Ownership is present-tense responsibility ("who runs", "who is the CEO
of"): "who was the first president of" asks a historical fact, so it is factual."""

from __future__ import annotations

import re
from dataclasses import dataclass

from tracegraph.base.extraction.nlp import pipeline

QUERY_TYPES = ("dependency", "ownership", "memory", "factual", "strategic", "vague")

# Which strategies each type runs (all of them are fused), and how many hops the graph walk takes.
PLANS: dict[str, tuple[tuple[str, ...], int]] = {
    "dependency": (("graph", "ppr", "sparql", "bm25", "vector"), 3),
    "ownership": (("graph", "ppr", "sparql", "bm25", "vector"), 2),
    "memory": (("ppr", "vector", "bm25", "graph"), 1),
    "factual": (("ppr", "vector", "bm25", "graph", "sparql"), 2),
    "strategic": (("ppr", "vector", "bm25", "graph"), 1),
    "vague": (("ppr", "vector", "bm25"), 1),
}

# How much each strategy's ranks count in the fusion, per query type (weighted RRF; unnamed: 1). The
# passage walk (`ppr`) is the only strategy that reaches a second document on its own, so equal votes
# let the first-hop strategies, which agree with each other, bury what only it found; the graph walk
# follows the asked relation across hops for dependency and ownership questions.
FUSION_WEIGHTS: dict[str, dict[str, float]] = {
    "dependency": {"graph": 3.0, "ppr": 3.0},
    "ownership": {"graph": 3.0, "ppr": 3.0},
    "memory": {"ppr": 4.0},
    "factual": {"ppr": 6.0},
    "strategic": {"ppr": 4.0},
    "vague": {"ppr": 4.0},
}

ROUTER_SYSTEM = ("Classify the user's question about a knowledge graph. Reply with exactly one word: "
                 "dependency (what something depends on, uses, calls or needs), ownership (who owns, runs, "
                 "maintains or leads something), memory (why something was decided or built as it is, what went "
                 "wrong with it before: decisions, incidents, exceptions), factual (a specific fact), strategic (a corpus-wide overview, "
                 "structure or risks) or vague (too unspecific to look anything up).")

# -- the pieces of a question the patterns are built from (all matched on lower-cased text) ------------

# The asker: the question word and up to three words of its head ("which internal services"), or a
# request to list ("list the services that"). It stops before a verb, so what follows is the asked verb.
_HEAD = r"(?!(?:that|which|who|whom|whose|is|are|was|were|does|do|did|has|have|had|will|would|can|could)\b)[\w'&.-]+"
_ASKER = (rf"(?:^(?:who|whom|whose|what|which|how many|how much)(?:\s+{_HEAD}){{0,3}}?"
          rf"|^(?:list|name|show(?: me)?|give me|find|identify)(?:\s+{_HEAD}){{0,4}}?\s+(?:that|which|who))")
_POSSESSOR = r"(?:[\w.&-]+\s+){0,5}?[\w.&-]+'s\s+"  # "the ledger store's "


def _present(*verbs: str) -> str:
    """Each verb (with its particle) in the forms a present-tense question uses: "rely on" gives
    "rely on|relies on"."""
    forms = []
    for verb in verbs:
        word, _, particle = verb.partition(" ")
        third = (word[:-1] + "ies" if word.endswith("y") and word[-2] not in "aeiou"
                 else word + "es" if word.endswith(("s", "sh", "ch", "x")) else word + "s")
        forms += [f"{w} {particle}".strip() for w in (word, third)]
    return "(?:" + "|".join(sorted(set(forms), key=len, reverse=True)) + ")"


_DEPENDS = ("depend on", "rely on", "use", "call", "need", "require", "import", "consume", "query", "invoke",
            "read from", "write to", "connect to", "talk to", "publish to", "subscribe to", "pull from",
            "run on", "integrate with", "link against", "store data in", "store its data in", "store their data in")
_DEPENDED_BY = r"(?:used|called|consumed|imported|required|needed|invoked|queried|depended on|relied on|read)"
_OWNS = ("own", "maintain", "manage", "oversee", "administer", "look after", "head", "lead", "run", "operate")
_OWNED_BY = r"(?:owned|maintained|managed|overseen|administered|looked after|headed|led|run|operated)"
_ROLES = (r"(?:owners?|owning (?:team|group|squad|org)|maintainers?|stewards?|custodians?|proprietors?"
          r"|(?:tech(?:nical)? |team |engineering |product |project |delivery )?(?:leads?|leaders?|managers?)"
          r"|heads?|ceo|cto|cfo|coo|cio|chief (?:\w+ )?(?:officer|executive|engineer|architect)|president"
          r"|chair(?:man|woman|person)?|product owner|point of contact|contact person|on-call engineer)")
# A verb that goes somewhere other than an object is not ownership: "runs on", "leads to", "heads north".
_NOT_AN_OBJECT = r"(?!\s+(?:on|to|into|through|along|across|past|from|between|under|over|down|up|for|in|at|by|out|off|away|as|north|south|east|west)\b)"
_INFRASTRUCTURE = r"(?:hosts?|servers?|machines?|nodes?|clusters?|containers?|platforms?|runtimes?|vms?|instances?)"
_FAILURE = (r"\b(?:outages?|downtime|failures?|goes down|went down|go down|is down|were down|fails|failed|"
            r"crash(?:es|ed)?|is removed|were removed|is deprecated|is unavailable|were unavailable)\b")
_EFFECT = r"\b(?:affected|impacted|break|breaks|broken|stop working|blast radius|impact|happen|knock-on)\b"

_OWNERSHIP = [
    rf"{_ASKER}\s+{_present(*_OWNS)}\b{_NOT_AN_OBJECT}",                                 # who owns X
    rf"{_ASKER}\s+(?:is|are)\s+(?:currently\s+|now\s+)?(?:responsible|accountable|in charge|on[- ]call)\b",
    rf"{_ASKER}\s+(?:is|are)\s+(?:the\s+)?(?:current\s+|acting\s+)?(?:{_POSSESSOR})?{_ROLES}(?:\s+(?:of|for|at|on|in)\b|$)",
    rf"{_ASKER}\s+(?:does|do)\s+.+\s+(?:report|belong|answer)\s+to$",                    # who does X report to
    r"^(?:who|which \w+)\s+(?:do|should|can|could|would)\s+(?:i|we)\s+(?:contact|ask|talk to|speak to|page|ping|"
    r"escalate to|reach out to|go to)\b",
    rf"{_ASKER}\s+(?:is|are)\s+.+\s+{_OWNED_BY}\s+by$",                                  # who is X maintained by
    rf"\b(?:is|are)\s+(?:currently\s+|still\s+)?{_OWNED_BY}\s+by\s+(?:whom|who|what|which)\b",  # X is owned by whom
    rf"^(?:is|are)\s+.+?\s+(?:still\s+|currently\s+)?{_OWNED_BY}\s+by\b",                # is X owned by Y
    rf"^(?:list|name|show(?: me)?|give me|find|identify)\s+(?:all\s+)?(?:of\s+)?(?:the\s+)?(?:{_POSSESSOR})?{_ROLES}\b",
]
# "Which host runs X?" asks what X runs on; it is tried before ownership's "who runs X".
_RUNS_ON = rf"^(?:what|which(?:\s+\w+)?\s+{_INFRASTRUCTURE})\s+(?:runs?|hosts?|serves?|executes?)\b"
_DEPENDENCY = [
    rf"{_ASKER}\s+{_present(*_DEPENDS)}\b",                                              # which services call X
    rf"{_ASKER}\s+(?:does|do|did|will|would|could|can|should)\s+.+\s+{_present(*_DEPENDS)}"
    r"(?:\s+(?:for|as|from|with|in|at|to|during)(?:\s+[\w'.-]+){1,4})?$",                 # what does X depend on
    rf"^(?:what|which \w+)\s+.+\s+{_present(*_DEPENDS)}$",                           # (tell me) what X depends on
    r"^how\s+(?:does|do|did|will|would|can)\s+.+?\s+(?:talks? to|connects? to|calls?|integrates? with|reads? from|"
    r"writes? to|depends? on|rel(?:y|ies) on)\b",                                        # how does X talk to Y
    r"^(?:what|which)\s+(?:[\w-]+\s+)?(?:services|systems|components|jobs|apps|applications|consumers|pipelines)"
    r"\s+(?:are|is|sit|sits|run|runs)\s+(?:up|down)stream\b",                          # which services are downstream
    r"^where\s+(?:does|do|did)\s+.+\s+(?:run|store (?:its |their )?data)$",             # where does X run
    rf"{_ASKER}\s+(?:is|are|was|were)\s+.+\s+(?:{_DEPENDED_BY}\s+by|running on)$",     # which services is X used by
    rf"\b(?:is|are)\s+(?:\w+\s+)?{_DEPENDED_BY}\s+by\s+(?:whom|what|which)\b",         # X is used by what
    rf"^(?:does|do|did|will|would|can|could)\s+(?:(?!that\b|which\b|who\b)[\w'.&-]+\s+){{1,6}}?{_present(*_DEPENDS)}\b",
    rf"^(?:is|are|was|were)\s+.+?\s+(?:still\s+)?{_DEPENDED_BY}\s+by\b",                # is X used by anything
    rf"{_ASKER}\s+(?:is|are)\s+(?:the\s+)?(?:{_POSSESSOR})?(?:(?:direct|transitive|upstream|downstream|main|"
    r"runtime)\s+)*(?:dependencies|dependents|dependency|prerequisites|callers|consumers)\b",
    r"^(?:list|name|show(?: me)?|give me|find|map|trace)\s+(?:all\s+)?(?:of\s+)?(?:the\s+)?(?:[\w.&'-]+\s+){0,4}?"
    r"(?:dependencies|dependents|callers|consumers)\b",
    rf"{_FAILURE}.*{_EFFECT}|{_EFFECT}.*{_FAILURE}",                                  # what breaks if X goes down
]
_STRATEGIC = [
    r"\b(?:overview|summar(?:y|ies|ise|ize|ising|izing)|big picture|bird'?s[- ]eye)\b",
    r"\bhigh[- ]level (?:view|picture|summary|architecture|design|structure)\b",
    r"^how\s+(?:is|are|was|were)\s+.+\s+(?:structured|organi[sz]ed|laid out|architected|put together|arranged|"
    r"divided|split up)\b",
    r"\bwhat does the (?:overall |whole |entire )?(?:architecture|system|platform|landscape|codebase|setup|stack) look like\b",
    r"\bfits? together\b|\bfits? into the (?:bigger picture|overall|architecture|system|platform)\b",
    r"\b(?:risks|risk areas|single points? of failure|spofs?|bottlenecks|technical debt|tech debt|"
    r"weak(?:est)? (?:spots|points|links)|hotspots)\b",
    r"\b(?:biggest|main|major|key|greatest|largest|top|critical|highest|most)\s+(?:\w+\s+)?risks?\b",
    r"\b(?:main|key|major|common|recurring|central|dominant)\s+(?:themes?|topics|trends?|patterns|takeaways|"
    r"lessons|findings|components|parts|building blocks|subsystems|layers|domains)\b",
    r"\b(?:across|throughout)\s+(?:all\s+)?(?:the\s+|our\s+|these\s+|this\s+)?(?:[\w-]+\s+)?(?:documents|docs|"
    r"corpus|collection|services|systems|platform|organi[sz]ation|company|teams|codebase|stack|reports|articles)\b",
    r"\b(?:the|this|whole|entire) (?:corpus|knowledge base|document set)\b",
    r"\b(?:prioriti[sz]e|roadmap)\b|\bwhere should (?:we|i) (?:invest|focus|start)\b",
    r"\b(?:our|technical|tech|platform|engineering|data|long[- ]term|migration|overall|cloud|product) strateg(?:y|ies)\b",
    r"\boverall (?:architecture|structure|picture|design|health|state|shape)\b",
]
# Why something is as it is, or what went wrong with it before: answered from decisions, post-mortems and
# exceptions (institutional memory, RSN-08). Tried first: "why does X depend on Y?" asks for a reason.
_MEMORY = [
    r"^why\s+(?:was|were|did|do|does|is|are|has|have|had)\b",
    r"^why\b.*\b(?:decid\w*|decision|chose|chosen|choose|picked|adopted|selected)\b",
    r"\b(?:rationale|reasoning|motivation|reasons?)\s+(?:for|behind|of)\b",
    r"^what\s+(?:led|drove|motivated|prompted)\s+(?:to\s+|us\s+to\s+)?(?:the\s+)?(?:decision|choice|move)\b",
    r"^(?:what|which)\s+(?:architectural\s+|design\s+|technical\s+)?decisions?\s+(?:were|was|have been|has been|did we)\b",
    r"^(?!who\b).*\b(?:adrs?|architecture decision records?|post-?mortems?|incident reviews?)\s+(?:about|for|on|of)\b",
    r"^what\s+(?:went wrong|failed|broke)\s+(?:with|in|at|during)\b",
    r"\b(?:exceptions?\s+to\s+(?:the\s+)?[\w-]+(?:\s+[\w-]+)?\s+polic(?:y|ies))\b",
]
_RULES = [(kind, re.compile(p)) for kind, patterns in (("memory", _MEMORY), ("dependency", [_RUNS_ON]),
                                                      ("ownership", _OWNERSHIP),
                                                      ("dependency", _DEPENDENCY), ("strategic", _STRATEGIC))
          for p in patterns]

_CLAUSE_BREAK = re.compile(r"[.;:!?]\s+|,\s+(?=(?:who|whom|whose|what|which|where|how|does|do|is|are)\b)")
_POLITE = re.compile(
    r"^(?:(?:hey|hi|hello|ok|okay|so|and|also|quick question|question)[,:]?\s+)*(?:please\s+)?"
    r"(?:(?:can|could|would|will) you (?:please )?(?:tell me|let me know|find out|check|show me)\s+|do you know\s+|"
    r"i (?:want|would like|'d like|need) to know\s+|i wonder\s+|tell me\s+(?=(?:who|what|which|whose|whether|if|how|where)\b))?")
# "On which host does X run?" reads as "which host does X run on?": the preposition goes back to its verb.
_FRONTED = re.compile(r"^(on|to|from|with|upon|by|for)\s+((?:which|what|whom)\b.*)$")

_WORD = re.compile(r"[a-z0-9][\w'-]*")
_FILLER = set("""a an the is are was were be do does did what which who whom whose how why when where of in on at to
for with about tell me please something anything stuff thing things it this that and or any some can could would you
your i my we our us""".split())
# Words that ask without saying about what: a question made only of these cannot be looked up.
_GENERIC = set("""help think know say said show give explain info information details detail more else other one ones
new news update updates status happened happening going good bad right wrong ok okay true false interesting important
relevant system platform service project app data again just really very so there here now then up out yes no hmm
thanks everything""".split())
_ASKS = re.compile(r"\b(?:who|whom|whose|what|which|when|where|why|how|list|name|describe|compare)\b")
_REFERS_BACK = re.compile(r"\b(?:it|its|this|that|these|those|they|them|their|he|she|him|her|the other|one)\b")


@dataclass(frozen=True, slots=True)
class Route:
    query_type: str
    strategies: tuple[str, ...]
    hops: int
    method: str  # how the type was decided, for the trace


def route_by_rules(question: str) -> Route:
    """Patterns for the asked relation in a fixed order (memory, ownership, dependency, overview), tried
    on each clause; then a question with nothing to look up is vague, and the rest are factual.

    >>> route_by_rules("What does Helios Grid depend on?").query_type
    'dependency'
    >>> route_by_rules("Who maintains the Ledger Store?").query_type
    'ownership'
    >>> route_by_rules("Which operating systems does VLC run on?").query_type
    'dependency'
    >>> route_by_rules("Who founded the company that owns Instagram?").query_type
    'factual'
    >>> route_by_rules("stuff?").query_type
    'vague'
    >>> route_by_rules("Why was Skyline moved to two regions?").query_type
    'memory'
    """
    clauses = list(dict.fromkeys(_normalised(c) for c in [question, *_CLAUSE_BREAK.split(question.strip())]
                                 if c.strip()))
    for query_type, pattern in _RULES:
        for clause in clauses:
            found = pattern.search(clause)
            if found and query_type == "memory" and _nothing_to_look_up(question):
                continue  # "why is it slow?" names nothing whose history could be looked up
            if found:
                article = "an" if query_type[0] in "aeiou" else "a"
                cue = found.group(0).strip()
                cue = cue if len(cue) <= 60 else cue[:57] + "..."
                return plan(query_type, f"rules: '{cue}' marks {article} {query_type} question")
    if _nothing_to_look_up(question):
        return plan("vague", "rules: no name and too few content words to look anything up")
    return plan("factual", "rules: no asked dependency, ownership or overview; a factual question")


# "Who owned X?" alone asks a historical fact; asked as of a date ("in 2024"), who owned X then.
_PAST_OWNERSHIP = re.compile(rf"{_ASKER}\s+(?:owned|maintained|managed|oversaw|administered|looked after|headed|led|"
                             rf"ran|operated)\b{_NOT_AN_OBJECT}")


def as_of_a_date(route: Route, question: str) -> Route:
    """The route of a question whose answer stands at a date: a factual "who owned / led X" asks for the
    owner then, an ownership question.

    >>> as_of_a_date(route_by_rules("Who owned Skyline in 2024?"), "Who owned Skyline in 2024?").query_type
    'ownership'
    """
    if route.query_type != "factual":
        return route
    found = next((m for c in (question, *_CLAUSE_BREAK.split(question.strip())) if
                  (m := _PAST_OWNERSHIP.search(_normalised(c)))), None)
    if found is None:
        return route
    return plan("ownership", f"{route.method}; asked as of a date, '{found.group(0).strip()}' asks who it was then")


def _normalised(clause: str) -> str:
    """Lower case, plain quotes, no closing punctuation or politeness, a fronted preposition moved back."""
    text = clause.lower().translate(str.maketrans("’‘“”", "''\"\""))
    text = re.sub(r"\s+", " ", text).strip(" \"'")
    text = re.sub(r"[\s?!.,]+$", "", text)
    text = _POLITE.sub("", text)
    text = re.sub(r"\b(what|who|where|how|that|it|there)'s\b", r"\1 is", text)
    fronted = _FRONTED.match(text)
    return f"{fronted.group(2)} {fronted.group(1)}" if fronted else text


def _nothing_to_look_up(question: str) -> bool:
    """Vague: no content word at all; or at most two, and either no question word (a bare keyword,
    "grid?") or a pronoun with no noun beside it that could be what it refers to ("why is it slow?")."""
    text = _normalised(question)
    content = [w for w in (re.sub(r"'s$", "", w) for w in _WORD.findall(text)) if w not in _FILLER | _GENERIC]
    if not content:
        return True
    if len(content) > 2:
        return False
    asks = _ASKS.search(text)
    return not asks or (bool(_REFERS_BACK.search(text)) and not _names_a_thing(text))


def _names_a_thing(text: str) -> bool:
    """Whether a noun stands among the words of the (lower-cased) question, by spaCy's tagger: "why is it
    slow in skyline" names skyline, "why is it slow" nothing. Read in lower case, capitals never decide.

    >>> _names_a_thing("why is it slow in skyline"), _names_a_thing("why is it slow")
    (True, False)
    """
    return any(t.pos_ in ("NOUN", "PROPN") and t.lower_ not in _FILLER | _GENERIC for t in pipeline()(text.lower()))


def parse_route(reply: str) -> str | None:
    """The query type an LLM's reply names first, if any."""
    found = re.search(r"\b(" + "|".join(QUERY_TYPES) + r")\b", reply.lower())
    return found.group(1) if found else None


def plan(query_type: str, method: str) -> Route:
    strategies, hops = PLANS[query_type]
    return Route(query_type, strategies, hops, method)
