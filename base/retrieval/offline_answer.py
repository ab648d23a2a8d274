"""What an answer says when no LLM writes it. A question about a relation gets a statement of that
relation's objects for the asked entity, built from the selected facts that state it ("Billing depends on
Ledger, Tax and Redis."), then those facts with their sources. Any other question gets the sentence of
the best passages that best answers it, quoted with its source, then the best sentence of each other top
passage: a multi-hop question's bridge is often there. The list of every selected fact stays in the
trace (the Focus step), never in the answer.

The best sentence is the one holding the best candidate of the kind of thing the question asks for (a
person for "who", a date for "when", a number for "how many"; spaCy's named entities), each sentence
scored by its embedding similarity to the question, the question's words it shares, and how relevant its
passage is."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from tracegraph.base.extraction import nlp
from tracegraph.base.retrieval.asked_relation import AskedRelation, predicate_shape, same_relation, states
from tracegraph.base.retrieval.relations import content_stems

PREFIX = "Offline answer (no LLM configured)"
NO_FACTS = f"{PREFIX}: the knowledge graph holds no facts related to the question."
SPAN_HEADER = f"{PREFIX}, the sentence of the best passages that best answers the question:"
FACTS_HEADER = f"{PREFIX}: no fact or passage sentence states what the question asks; the facts nearest it:"
SUPPORT_HEADER = "Supporting facts:"
MORE_HEADER = "Also from the best passages:"
MAX_OBJECTS = 8  # named in the statement; more are counted
MAX_SUPPORT = 6  # supporting facts listed
MORE_SENTENCES = 3  # other passages' best sentences
NEAREST_FACTS = 3  # facts quoted when nothing states the asked relation and no passage has text
CORROBORATION = 0.05  # a candidate's gain for each further sentence naming it

_PLACE = (r"city|country|state|county|town|place|location|continent|region|island|province|village|nation|capital|"
          r"river|district|area|municipality|borough|neighbou?rhood|street|venue|stadium|airport|host|cluster|region")
_ORGANISATION = (r"company|band|organi[sz]ation|team|squad|university|college|school|group|party|club|label|network|"
                 r"airline|publisher|newspaper|magazine|agency|corporation|firm|league|institution|brand|studio|"
                 r"developer|channel|station|franchise|vendor|supplier")
_PERSON = (r"actor|actress|singer|politician|president|director|writer|author|player|musician|artist|composer|man|"
           r"woman|person|king|queen|senator|governor|father|mother|son|daughter|wife|husband|founder|producer|coach|"
           r"rapper|poet|painter|scientist|leader|ceo|chairman|emperor|minister|character|comedian|presenter|"
           r"journalist|guitarist|drummer|vocalist|footballer|boxer|wrestler|engineer|maintainer|owner|manager")
# The kinds of named entity (spaCy's labels) that answer a question, by how it asks.
_ASKS_FOR: list[tuple[re.Pattern[str], frozenset[str]]] = [
    (re.compile(r"\bhow (?:many|much|long|tall|high|old|far|big|large)\b|\bpercentage\b|\bpopulation\b"),
     frozenset({"CARDINAL", "QUANTITY", "PERCENT", "MONEY"})),
    (re.compile(r"\bwhen\b|\b(?:what|which) (?:year|date|day|month|century|decade)\b|\bwhat time\b"),
     frozenset({"DATE", "TIME"})),
    (re.compile(rf"\bwhere\b|\b(?:what|which) (?:\w+ )?(?:{_PLACE})\b"), frozenset({"GPE", "LOC", "FAC"})),
    (re.compile(rf"\b(?:what|which) (?:\w+ ){{0,2}}(?:{_ORGANISATION})s?\b"), frozenset({"ORG"})),
    (re.compile(rf"\b(?:what|which) (?:\w+ ){{0,2}}(?:{_PERSON})s?\b"), frozenset({"PERSON"})),
    (re.compile(r"^(?:who|whom|whose)\b|\bwho\b|\bwhom\b"), frozenset({"PERSON", "ORG", "NORP"})),
]


@dataclass(frozen=True, slots=True)
class Fact:
    """A selected fact as the answer reads it: labels, and the IRIs of its ends ("" for a literal)."""

    subject: str
    predicate: str
    object: str
    subject_id: str = ""
    object_id: str = ""

    @property
    def text(self) -> str:
        return " ".join(" ".join(part.split()) for part in (self.subject, self.predicate, self.object))


@dataclass(frozen=True, slots=True)
class RelationAnswer:
    statement: str  # "Billing depends on Ledger, Tax and Redis."
    facts: tuple[Fact, ...]  # the facts it rests on, most relevant first


@dataclass(frozen=True, slots=True)
class Sentence:
    """A sentence of a passage, with where it was read: `passage` is the chunk, `rank` its passage's
    rank (0 is the best), `place` how a reader finds it ("Helios report, line 3")."""

    text: str
    passage: str
    rank: int
    place: str


@dataclass(frozen=True, slots=True)
class SpanAnswer:
    best: Sentence
    more: tuple[Sentence, ...] = ()
    candidate: str | None = None  # the named entity that made `best` the best sentence, for the trace


@dataclass
class OfflineAnswer:
    """The composed answer, and how it was composed (for the trace's Synthesis)."""

    text: str
    method: str
    relation: RelationAnswer | None = None
    span: SpanAnswer | None = None
    notes: list[str] = field(default_factory=list)


def relation_answer(asked: AskedRelation, facts: Sequence[Fact], entity_ids: Sequence[str] = ()) -> RelationAnswer | None:
    """The asked relation's objects for the asked entity, from the facts that state it; None when none does.

    >>> asked = AskedRelation("Billing", frozenset({"depend"}), "depend on", "agent")
    >>> facts = [Fact("Billing", "depends on", "Ledger"), Fact("Billing", "is a", "service"),
    ...          Fact("Billing", "depends on", "Tax"), Fact("Billing", "depends on", "Redis")]
    >>> relation_answer(asked, facts).statement
    'Billing depends on Ledger, Tax and Redis.'
    """
    wanted = _name_key(asked.mention)
    ids = set(entity_ids)
    groups: dict[tuple[bool, str], list[Fact]] = {}
    for fact in facts:
        for entity_is_subject, end, end_id in ((True, fact.subject, fact.subject_id),
                                               (False, fact.object, fact.object_id)):
            if (end_id in ids or _name_key(end) == wanted) and states(asked, fact.predicate, entity_is_subject):
                group = groups.setdefault((entity_is_subject, " ".join(fact.predicate.split())), [])
                if fact not in group:
                    group.append(fact)
                break
    if not groups:
        return None
    clauses = []
    for (forward, predicate), group in groups.items():
        others = list(dict.fromkeys(" ".join((f.object if forward else f.subject).split()) for f in group))
        entity = " ".join((group[0].subject if forward else group[0].object).split())
        clauses.append(f"{entity} {predicate} {listed(others)}" if forward
                       else f"{listed(others)} {plural(predicate) if len(others) > 1 else predicate} {entity}")
    used = tuple(dict.fromkeys(f for group in groups.values() for f in group))
    return RelationAnswer(" ".join(f"{_capitalised(c)}." for c in clauses), used)


def listed(items: Sequence[str], limit: int = MAX_OBJECTS) -> str:
    """Items as a sentence lists them.

    >>> listed(["Ledger"]), listed(["Ledger", "Tax"]), listed(["A", "B", "C"]), listed(list("ABCD"), 2)
    ('Ledger', 'Ledger and Tax', 'A, B and C', 'A, B and 2 more')
    """
    shown = list(items[:limit])
    if len(items) > limit:
        return f"{', '.join(shown)} and {len(items) - limit} more"
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} and {shown[-1]}"


def plural(predicate: str) -> str:
    """A predicate label agreeing with a plural subject: "calls" → "call", "is owned by" → "are owned by"."""
    words = predicate.split()
    if not words:
        return predicate
    first = {"is": "are", "was": "were", "has": "have", "does": "do"}.get(words[0].lower())
    if first is None:
        token = next(iter(nlp.parse([f"They {predicate} it."])))[1]
        first = token.lemma_ if token.tag_ == "VBZ" else words[0]
    return " ".join([first, *words[1:]])


def answer_kinds(question: str) -> frozenset[str] | None:
    """The kinds of named entity (spaCy labels) that answer the question; None when it does not say.

    >>> sorted(answer_kinds("When was Adelaide Lightning formed?")), answer_kinds("Is Ledger stateful?")
    (['DATE', 'TIME'], None)
    """
    text = " ".join(question.lower().split())
    return next((kinds for pattern, kinds in _ASKS_FOR if pattern.search(text)), None)


def best_span(question: str, question_vector: Sequence[float], sentences: Sequence[Sentence],
              vectors: Sequence[Sequence[float]]) -> SpanAnswer | None:
    """The sentence that best answers the question, and the best sentence of each other passage (in
    passage rank order, at most MORE_SENTENCES)."""
    if not sentences:
        return None
    scores = _sentence_scores(question, question_vector, sentences, vectors)
    order = sorted(range(len(sentences)), key=lambda i: -scores[i])
    best, candidate = order[0], None
    kinds = answer_kinds(question)
    if kinds is not None:
        found = _best_candidate(question, [sentences[i].text for i in order], [scores[i] for i in order], kinds)
        if found is not None:
            best, candidate = order[found[1]], found[0]
    chosen = sentences[best]
    # Another passage's sentence is worth quoting when it speaks of what the question or the best
    # sentence speaks of: a multi-hop question's bridge is named in the best sentence.
    topic = content_stems(question) | content_stems(chosen.text)
    per_passage: dict[str, int] = {}
    for i in order:
        if sentences[i].passage != chosen.passage and sentences[i].text != chosen.text \
                and topic & content_stems(sentences[i].text):
            per_passage.setdefault(sentences[i].passage, i)
    more = sorted(per_passage.values(), key=lambda i: sentences[i].rank)[:MORE_SENTENCES]
    return SpanAnswer(chosen, tuple(sentences[i] for i in more), candidate)


def relation_text(answer: RelationAnswer, sources: Mapping[Fact, str]) -> str:
    """The relation answer: its statement, then the facts it rests on with their sources."""
    lines = [f"{PREFIX}: {answer.statement}", SUPPORT_HEADER]
    for fact in answer.facts[:MAX_SUPPORT]:
        where = sources.get(fact)
        lines.append(f"- {fact.text}" + (f" ({where})" if where else ""))
    return "\n".join(lines)


def span_text(answer: SpanAnswer) -> str:
    """The best sentence quoted with its source, then the other passages' best sentences."""
    lines = [SPAN_HEADER, _quote(answer.best)]
    if answer.more:
        lines += [MORE_HEADER, *(f"- {_quote(s)}" for s in answer.more)]
    return "\n".join(lines)


def nearest_facts_text(facts: Sequence[Fact], sources: Mapping[Fact, str]) -> str:
    """When nothing states the asked relation and no passage text was read: the few facts nearest the
    question, definitions ("X is defined as <a sentence>") left out while others remain."""
    plain = [f for f in facts if predicate_shape(f.predicate).lemmas != frozenset({"define"})] or list(facts)
    lines = [FACTS_HEADER]
    for fact in plain[:NEAREST_FACTS]:
        where = sources.get(fact)
        lines.append(f"- {fact.text.rstrip('.')}." + (f" ({where})" if where else ""))
    return "\n".join(lines)


def answers_relation(asked: AskedRelation, text: str) -> bool:
    """Whether an answer's first statement names the asked entity and states the asked relation: what
    the offline agent asks of the graph's answer before it stops there.

    >>> asked = AskedRelation("Billing", frozenset({"depend"}), "depend on", "agent")
    >>> answers_relation(asked, "Offline answer (no LLM configured): Billing depends on Ledger.\\nSupporting facts:")
    True
    >>> answers_relation(asked, "Offline answer (no LLM configured): Billing is a service.")
    False
    """
    statement = first_statement(text)
    if not statement or _name_key(asked.mention) not in f" {_name_key(statement)} ":
        return False
    doc = next(iter(nlp.parse([statement])))
    return same_relation(asked.lemmas, frozenset(t.lemma_.lower() for t in doc if t.is_alpha))


def first_statement(text: str) -> str:
    """An answer's first line of substance: after an offline prefix, or the line after a header line."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    for line in lines:
        body = line.split(":", 1)[1].strip() if line.startswith(PREFIX) and ":" in line else line
        if body and not body.endswith(":"):
            return body
    return ""


def _sentence_scores(question: str, question_vector: Sequence[float], sentences: Sequence[Sentence],
                     vectors: Sequence[Sequence[float]]) -> list[float]:
    q = np.asarray(question_vector, dtype=np.float32)
    m = np.asarray(vectors, dtype=np.float32).reshape(len(sentences), -1)
    cosine = (m @ q) / np.clip(np.linalg.norm(m, axis=1) * np.linalg.norm(q), 1e-12, None)
    passage_best: dict[str, float] = {}
    for s, c in zip(sentences, cosine):
        passage_best[s.passage] = max(passage_best.get(s.passage, -1.0), float(c))
    wanted = content_stems(question)
    scores = []
    for s, c in zip(sentences, cosine):
        shared = len(wanted & content_stems(f"{s.text} {s.place}")) / max(1, len(wanted))
        scores.append(float(c) + 0.3 * shared - 0.02 * s.rank + 0.3 * passage_best[s.passage])
    return scores


def _best_candidate(question: str, ordered: Sequence[str], scores: Sequence[float], kinds: frozenset[str]
                    ) -> tuple[str, int] | None:
    """(entity, position in `ordered`) of the best named entity of the wanted kinds that the question
    does not name itself: scored by its best sentence (`ordered` is best first), a little more for each
    other sentence that names it (up to three)."""
    asked = f" {_name_key(question)} "
    found: dict[str, list] = {}  # key -> [position of its best sentence, sentences naming it, text]
    for position, doc in enumerate(nlp.parse(list(ordered))):
        for entity in doc.ents:
            key = _name_key(entity.text)
            if entity.label_ in kinds and key and f" {key} " not in asked:
                entry = found.setdefault(key, [position, 0, entity.text])
                entry[1] += 1
    if not found:
        return None
    position, _, text = max(found.values(), key=lambda e: scores[e[0]] + CORROBORATION * min(e[1], 3))
    return text, position


def _quote(sentence: Sentence) -> str:
    return f"\"{sentence.text}\"" + (f" ({sentence.place})" if sentence.place else "")


def _capitalised(text: str) -> str:
    return text[:1].upper() + text[1:]


def _name_key(name: str) -> str:
    """A name compared as grounding compares it: case, punctuation, a leading article and a trailing
    "(qualifier)" left out."""
    text = re.sub(r"\s*\([^()]*\)\s*$", "", name.strip())
    words = re.findall(r"\w+", text.lower())
    if words and words[0] in ("the", "a", "an"):
        words = words[1:]
    return " ".join(words)

