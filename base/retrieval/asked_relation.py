"""The relation a question asks about one named entity, read from spaCy's parse ("What does Billing depend
on?" asks `depend` with Billing as its agent; "Who directed Alien?" asks `direct` with Alien as its patient;
"What is the capital of France?" asks the noun `capital` of France), and whether a fact's predicate label
states that relation with the entity on the asked side. An offline answer states the relation's objects
from such facts; the offline agent checks that an answer does.

Only the question's main relation counts: in "Who was the first president of the association which
published X?" the relation that names X (`publish`) sits in a relative clause and describes a bridge, so
nothing is asked about X directly and there is no asked relation."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from tracegraph.base.extraction import nlp

Role = str  # "agent" (does the verb), "patient" (undergoes it) or "other" (a place, a time, …)
_LIGHT = frozenset({"be", "have", "do", "get"})
_ASKING = frozenset({"who", "whom", "whose", "what", "which", "where", "when", "how"})
# Verbs that ask for something about the entity rather than name a relation of it ("Tell me about X").
_REQUESTS = frozenset("tell describe explain show give list summarise summarize find say know mention".split())
# Derivational endings that keep the relation: director ~ direct, founder ~ found, owner ~ own.
_DERIVED = ("er", "or", "ers", "ors", "ing", "ion", "ation", "ship", "ment", "ed", "s", "es")


@dataclass(frozen=True, slots=True)
class AskedRelation:
    """A question's relation about one entity: `mention` as the question writes it, the relation's
    lemmas, and where the entity stands in it ("agent", "patient", or "either" for a relation noun,
    whose facts are written both ways: "capital of France", "France has capital Paris")."""

    mention: str
    lemmas: frozenset[str]
    phrase: str  # the relation as the question says it, for the trace and answers ("depend on")
    entity_role: str  # "agent", "patient" or "either"
    answer_role: Role | None = None  # "agent" when the question asks who did it ("Who founded X?")

    def describe(self) -> str:
        side = {"agent": "as its subject", "patient": "as its object"}.get(self.entity_role, "on either side")
        return f"asks '{self.phrase}' about {self.mention} ({side})"


@dataclass(frozen=True, slots=True)
class PredicateShape:
    """A predicate label as the relation it states: its lemmas, and the roles of a fact's subject and
    object ("is owned by": patient, agent; "born in": patient, other; "is the capital of": either)."""

    lemmas: frozenset[str]
    subject_role: str
    object_role: str


def asked_relation(question: str, mentions: Sequence[str]) -> AskedRelation | None:
    """The relation `question` asks about the first of `mentions` (the names grounding found in it) that
    is a direct argument of the question's main verb or relation noun; None when it asks none.

    >>> asked_relation("What does Billing depend on?", ["Billing"]).describe()
    "asks 'depend on' about Billing (as its subject)"
    >>> asked_relation("Where was Barack Obama born?", ["Barack Obama"]).describe()
    "asks 'bear' about Barack Obama (as its object)"
    >>> asked_relation("Who is the director of Alien?", ["Alien"]).describe()
    "asks 'director' about Alien (on either side)"
    >>> asked_relation("Who founded the company that owns Instagram?", ["Instagram"]) is None
    True
    """
    doc = _parse(question)
    for mention in mentions:
        span = _find(doc, mention)
        if span is not None:
            found = _relation_of(doc, span, mention)
            if found is not None:
                return found
    return None


def predicate_shape(label: str) -> PredicateShape:
    """How a predicate label relates its subject and object, from the parse of "X <label> Y."."""
    return _predicate_shape(" ".join(label.split()).lower())


def states(asked: AskedRelation, label: str, entity_is_subject: bool) -> bool:
    """Whether a fact with predicate `label` and the asked entity as its subject (or object) states the
    asked relation with the entity on the asked side."""
    shape = predicate_shape(label)
    if not same_relation(asked.lemmas, shape.lemmas):
        return False
    if asked.entity_role == "either" or "either" in (shape.subject_role, shape.object_role):
        return True
    mine, other = ((shape.subject_role, shape.object_role) if entity_is_subject
                   else (shape.object_role, shape.subject_role))
    return mine == asked.entity_role and (asked.answer_role is None or other == asked.answer_role)


def same_relation(asked: frozenset[str], stated: frozenset[str]) -> bool:
    """Lemmas that name one relation: shared, or one derived from the other (direct ~ director).

    >>> same_relation(frozenset({"director"}), frozenset({"direct"})), same_relation(frozenset({"own"}), frozenset({"call"}))
    (True, False)
    """
    return any(a == s or _derived(a, s) or _derived(s, a) for a in asked for s in stated)


def _derived(longer: str, shorter: str) -> bool:
    return len(shorter) >= 3 and longer.startswith(shorter) and longer[len(shorter):] in _DERIVED \
        or len(shorter) >= 4 and shorter.endswith("e") and longer.startswith(shorter[:-1]) \
        and longer[len(shorter) - 1:] in _DERIVED


@lru_cache(maxsize=256)
def _parse(text: str):
    return next(iter(nlp.parse([text])))


@lru_cache(maxsize=4096)
def _predicate_shape(label: str) -> PredicateShape:
    doc = _parse(f"X {label} Y.")
    words = [t for t in doc if 2 <= t.idx < 2 + len(label)]  # the label's own tokens
    lemmas = frozenset(t.lemma_.lower() for t in words if t.pos_ in ("VERB", "NOUN", "ADJ", "PROPN")
                       and t.lemma_.lower() not in _LIGHT)
    if any(t.dep_ == "attr" or (t.pos_ == "NOUN" and t.head.lemma_ in _LIGHT) for t in words) \
            or not any(t.pos_ == "VERB" for t in words):
        return PredicateShape(lemmas, "either", "either")  # "is the capital of", "capital"
    passive = any(t.dep_ in ("auxpass", "agent") for t in words) or \
        any(t.tag_ == "VBN" and t.dep_ in ("acl", "ROOT") and not any(c.dep_ == "aux" for c in t.children)
            for t in words)
    if not passive:
        return PredicateShape(lemmas, "agent", "patient")
    return PredicateShape(lemmas, "patient", "agent" if any(t.lower_ == "by" for t in words) else "other")


def _find(doc, mention: str):
    """The tokens of `mention` in the parsed question (any case), or None."""
    found = re.search(r"(?<!\w)" + re.escape(mention) + r"(?!\w)", doc.text, re.IGNORECASE)
    if found is None:
        return None
    return doc.char_span(found.start(), found.end(), alignment_mode="expand")


def _relation_of(doc, span, mention: str) -> AskedRelation | None:
    root = span.root
    if root.dep_ == "conj" or any(c.dep_ == "conj" for c in root.children):
        return None  # "stars X, Y and the producer of Z" asks about them together
    head, role = root.head, None
    if root.dep_ == "nsubj":
        role = "patient" if _passive(head) else "agent"
    elif root.dep_ in ("nsubjpass", "dobj"):
        role = "patient"
    elif root.dep_ == "pobj" and head.dep_ in ("prep", "agent"):
        preposition, head = head, head.head
        if head.pos_ in ("NOUN", "PROPN") and preposition.lower_ == "of":
            role = "either"
        elif head.pos_ in ("VERB", "AUX"):
            role = "agent" if preposition.lower_ == "by" and _passive(head) else "patient"
    elif root.dep_ == "poss" and head.pos_ == "NOUN":
        role = "either"
    if role is None or not _main(head):
        return None
    if role == "either":
        return AskedRelation(mention, frozenset({head.lemma_.lower()}), head.lemma_.lower(), "either")
    if head.lemma_.lower() in _LIGHT | _REQUESTS:
        return None
    particles = [c.lower_ for c in head.children if c.dep_ in ("prt", "prep") and c.i > head.i
                 and not any(g.i in range(span.start, span.end) for g in c.subtree)]
    phrase = " ".join([head.lemma_.lower(), *particles[:1]])
    return AskedRelation(mention, frozenset({head.lemma_.lower()}), phrase, role, _answer_role(head))


def _main(head) -> bool:
    """The question's own relation: its root, or the noun a copula root asks about ("Who is the
    director of X?"), not one inside a relative clause or a modifier."""
    if head.dep_ == "ROOT":
        return True
    return head.pos_ == "NOUN" and head.dep_ in ("attr", "nsubj") and head.head.dep_ == "ROOT" \
        and head.head.lemma_ in _LIGHT


def _passive(verb) -> bool:
    return any(c.dep_ in ("auxpass", "nsubjpass") for c in verb.children)


def _answer_role(verb) -> Role | None:
    """"agent" when the question word is who does the verb: its active subject, or "by whom"."""
    for child in verb.children:
        asking = child.lower_ in _ASKING or any(t.lower_ in _ASKING for t in child.subtree if t.dep_ == "det")
        if child.dep_ == "nsubj" and asking and not _passive(verb):
            return "agent"
        if child.dep_ == "agent" and any(t.lower_ in ("whom", "who") for t in child.subtree):
            return "agent"
    return None
