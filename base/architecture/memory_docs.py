"""Institutional memory from Markdown, by rules (no model on this machine): an ADR gives a decision, a
post-mortem a failure pattern and its lessons, review comments one memory each, and a sentence granting
an exception to a policy an exception; each names the entities it touches, with its author and date.
This module holds those rules; reading the Markdown itself (sections, metadata, blocks, signed comments, dates)
is markdown_document.py's job."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

from tracegraph.base.architecture.markdown_document import (
    MONTH_NAMES,
    Document,
    block_spans,
    body_blocks,
    dates_in,
    parse_date,
    read_document,
    signed_comments,
)
from tracegraph.base.retrieval.names import question_names

__all__ = ["ADR", "FIELDS", "GIST_LIMIT", "POSTMORTEM", "RECORD_KINDS", "RELATIONS", "REVIEW", "DocumentKind",
           "MemoryRecord", "RecordKind", "dates_in", "extract", "find_name", "gist", "normalise_status", "option_name",
           "parse_date", "recognise"]

ADR, POSTMORTEM, REVIEW = "text/x-adr", "text/x-postmortem", "text/x-review-comments"
DocumentKind = Literal["adr", "postmortem", "review-comments"]
RecordKind = Literal["decision", "failure-pattern", "exception", "memory"]
RECORD_KINDS: tuple[RecordKind, ...] = ("decision", "failure-pattern", "exception", "memory")
FIELDS = ("rationale", "consequence", "root-cause", "impact", "action-items", "policy", "options", "drivers", "chosen")
RELATIONS = ("why", "affected", "caused-by", "excepts", "concerns")
GIST_LIMIT = 800  # characters of a record's text: enough for a decision, short enough to show in an answer
OPTION_LIMIT = 300  # characters of one considered option or decision driver: its name and why it was (not) taken
Span = tuple[int, int]  # first and last line (1-based, inclusive)
_DECLARED: dict[str, DocumentKind] = {ADR: "adr", "adr": "adr", POSTMORTEM: "postmortem", "postmortem": "postmortem",
                                      "post-mortem": "postmortem", REVIEW: "review-comments",
                                      "review-comments": "review-comments"}


@dataclass(frozen=True, slots=True)
class MemoryRecord:
    """One remembered thing. `fields` keys are FIELDS ("action-items", "options" and "drivers" hold one item
    per line; "chosen" is the option taken); `relations` maps RELATIONS to entity names as the document
    writes them; `lines` maps "text" and FIELDS to the lines each says it on (one span per item)."""

    kind: RecordKind
    title: str
    text: str
    line: int
    author: str = ""
    date: str = ""
    status: str = ""
    fields: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    relations: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: MappingProxyType({}))
    lines: Mapping[str, tuple[Span, ...]] = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self) -> None:
        # Read-only all the way down: a record handed on cannot change under its reader; empty entries dropped.
        object.__setattr__(self, "fields", MappingProxyType({k: v for k, v in self.fields.items() if v}))
        object.__setattr__(self, "relations", MappingProxyType({k: tuple(v) for k, v in self.relations.items() if v}))
        object.__setattr__(self, "lines", MappingProxyType({k: tuple(v) for k, v in self.lines.items() if v}))


# ---------------------------------------------------------------- statuses, names, gists

_STATUSES = {"accepted": "accepted", "approved": "accepted", "adopted": "accepted", "proposed": "proposed",
             "draft": "proposed", "superseded": "superseded", "deprecated": "deprecated", "rejected": "rejected",
             "declined": "rejected"}
_STATUS = re.compile(r"\b(" + "|".join(_STATUSES) + r")\b", re.IGNORECASE)


def normalise_status(text: str) -> str:
    """An ADR status in lower case (accepted, proposed, superseded, deprecated, rejected), else "".

    >>> normalise_status("**Superseded** by ADR 0009"), normalise_status("Approved"), normalise_status("n/a")
    ('superseded', 'accepted', '')
    """
    found = _STATUS.search(text)
    return _STATUSES[found.group(1).lower()] if found else ""


def _name_pattern(name: str) -> str | None:
    """A name's words in order, separated by any spacing, hyphens or underscores, as whole words."""
    words = re.findall(r"[^\W_]+", name)
    return r"(?<![^\W_])" + r"[\s_-]+".join(map(re.escape, words)) + r"(?![^\W_])" if words else None


def find_name(name: str, text: str) -> str:
    """`name` as `text` writes it (case, spacing and hyphens aside), else "".

    >>> find_name("storage gateway", "Uploads go through the Storage-Gateway."), find_name("Orbis", "Orbital")
    ('Storage-Gateway', '')
    """
    pattern = _name_pattern(name)
    found = re.search(pattern, text, re.IGNORECASE) if pattern else None
    return found.group(0) if found else ""


_SENTENCE_END = re.compile(r"[.!?](?=\s|$)")


def gist(text: str, limit: int = GIST_LIMIT) -> str:
    """`text` on one line, cut after its last whole sentence within `limit` characters (a sentence
    longer than that is cut at a word, with "…").

    >>> gist("One. Two three. Four", 12), gist("abc def ghi", 8)
    ('One.', 'abc def…')
    """
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    ends = [m.end() for m in _SENTENCE_END.finditer(text, 0, limit)]
    if ends:
        return text[:ends[-1]]
    cut = text.rfind(" ", 0, limit)
    return text[:cut if cut > 0 else limit - 1].rstrip() + "…"


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+(?=[^\s a-z])", text) if s.strip()]


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Lower-case forms of words that start a sentence or name a section, never an entity on their own.
_OPENERS = _words("""a an the this that these those it its we our us they their he she you your i my all any
each every some most many no not yes and or but so yet if then when while once since after before because
however although though therefore thus hence also instead additionally moreover finally first second third
next last currently previously today now later there here as at by for from in into of on to via with within
without per during until use using keep adopt migrate move add remove deprecate replace introduce switch choose
run deploy store route build create enable disable allow require ensure make set stop start split merge retire
prefer avoid do don't never always see note please good bad neutral positive negative pros cons chosen
customers users engineers team teams""")
_SECTION_WORDS = _words("""context decision decisions outcome status consequence consequences summary impact
root cause causes action actions item items timeline lesson lessons learned learnt incident postmortem post-mortem
considered option options drivers background problem statement exception exceptions overview detection
resolution recovery trigger follow-up follow-ups notes references links comment comments review adr rfc pr
accepted proposed superseded deprecated rejected draft approved date author authors deciders owner owners title
tbd todo fixme n/a utc gmt pst pdt est edt cet cest bst sev sev0 sev1 sev2 sev3 p0 p1 p2 p3 ok etc""")
_CALENDAR = MONTH_NAMES | _words("monday tuesday wednesday thursday friday saturday sunday")
_CONNECTORS = _words("of the a an de la von van der for")
_GROUP = re.compile(r"\s+(?:team|squad|guild|org)\b")  # "Grid Analytics team" names the team, not a product
_AT_SENTENCE_START = re.compile(r"(?:^|[.!?:;—–])[\W_]*$")
# A document's lists and asides, unlike a question's titles: "Kafka for the Ledger" is two names and
# "Nimbus (exception to …)" one.
_BETWEEN_NAMES = re.compile(r"\s+(?:and|or|for|with|the|an?)\s+")
_SUBJECT_VERBS = _words("""is was are were has had have will would should can could must may might shall does did
needs owns runs uses depends calls reads writes serves handles stores sends keeps stays fails failed""")
_ASIDE = re.compile(r"\s*\([^()]*\)$")


class _Names:
    """Entity names of a document's passages: capitalised runs (as questions are read, then trimmed of
    what opens a sentence in a document) and the caller's known names, each as the document writes it."""

    def __init__(self, document: str, known: Iterable[str]) -> None:
        prose = re.sub(r"`[^`\n]*`", " ", document)  # "`skyline`" in code does not make "Skyline" a common word
        self._common = frozenset(re.findall(r"(?<![\w/.@-])[a-z][a-z']+(?![\w/.@-])", prose))
        self._capitalised = frozenset(re.findall(r"(?<=[\w,;)] )[A-Z][\w'’-]*", prose))  # inside a sentence
        patterns = sorted({p for name in known if (p := _name_pattern(str(name)))}, key=len, reverse=True)
        self._known = re.compile("|".join(patterns), re.IGNORECASE) if patterns else None

    def __call__(self, *texts: str) -> list[str]:
        names: dict[str, str] = {}
        for text in texts:
            for sentence in _sentences(text):
                for name in self._runs(sentence):
                    names.setdefault(name.casefold(), name)
            for m in self._known.finditer(text) if self._known else ():
                names.setdefault(m.group(0).casefold(), m.group(0))
        return list(names.values())

    def _runs(self, sentence: str) -> Iterator[str]:
        for found in question_names(sentence):
            at = sentence.find(found)
            parts = _BETWEEN_NAMES.split(_ASIDE.sub("", found))
            for k, part in enumerate(parts):
                words = part.split()
                opening = k == 0 and (at < 0 or bool(_AT_SENTENCE_START.search(sentence[:at])))
                lone = opening and len(words) == 1  # "Agreed, …", "Moving it …": capitalised as a sentence start
                while words and (words[0].lower() in _CONNECTORS | _CALENDAR or (opening and self._opener(words[0]))):
                    words = words[1:]
                while words and words[-1].lower() in _CONNECTORS:
                    words = words[:-1]
                if not self._named(words) or (lone and self._common_word(words[0], sentence[at + len(found):])):
                    continue
                group = _GROUP.match(sentence, at + len(found)) if at >= 0 and k == len(parts) - 1 else None
                yield " ".join(words) + (group.group(0) if group else "")

    def _common_word(self, word: str, after: str) -> bool:
        """A lone capitalised word opening a sentence is an ordinary word ("Agreed, …") unless the document
        capitalises it inside a sentence too, it is spelt like a name ("CockroachDB"), or a verb follows it."""
        following = after.split()[:1]
        return word not in self._capitalised and word[1:].islower() and \
            not (following and following[0] in _SUBJECT_VERBS)

    def _opener(self, word: str) -> bool:
        low = word.lower()
        return low in _OPENERS or (low in self._common and not word.isupper())

    @staticmethod
    def _named(words: list[str]) -> bool:
        bare = [w.lower().strip(".,'’") for w in words]
        if not bare or all(w in _SECTION_WORDS | _CALENDAR | _CONNECTORS or w.isdigit() for w in bare):
            return False
        return len(" ".join(words)) >= 2 and not parse_date(" ".join(words))



# ---------------------------------------------------------------- recognising a document

_ADR_MARKS = frozenset({"status", "context", "decision", "consequences", "options"})
_POSTMORTEM_MARKS = frozenset({"summary", "impact", "root-cause", "action-items", "timeline", "lessons", "incident",
                               "resolution"})
_ADR_TITLE = re.compile(r"\bADR\b|architecture decision|decision record", re.IGNORECASE)
_POSTMORTEM_TITLE = re.compile(r"post[- ]?mortem|incident|outage|retrospective|\bRCA\b", re.IGNORECASE)


def recognise(text: str, kind: str = "text/markdown") -> DocumentKind | None:
    """What kind of memory document `text` is: by the declared `kind`, else by its sections (ADR,
    post-mortem) or its signed comments; None for anything else.

    >>> recognise("# X\\n## Status\\nAccepted\\n## Context\\nWhy.\\n## Decision\\nDo it.")
    'adr'
    >>> recognise("Just a paragraph of prose."), recognise("anything", "text/x-postmortem")
    (None, 'postmortem')
    """
    return _recognised(read_document(text), kind)


def _recognised(document: Document, kind: str) -> DocumentKind | None:
    if kind.strip().lower() in _DECLARED:
        return _DECLARED[kind.strip().lower()]
    keys = {s.key for s in document.sections}
    adr = len(keys & _ADR_MARKS) + ("status" in document.meta and "status" not in keys) \
        + bool(_ADR_TITLE.search(document.title))
    titled = bool(_POSTMORTEM_TITLE.search(document.title))
    postmortem = len(keys & _POSTMORTEM_MARKS) + titled
    if "decision" in keys and adr >= 3 and adr >= postmortem:
        return "adr"
    if postmortem >= 3 and (titled or keys & {"impact", "root-cause", "timeline", "incident"}):
        return "postmortem"
    comments = signed_comments(document)
    if len(comments) >= 2 or any(c.date for c in comments):
        return "review-comments"
    return None


# ---------------------------------------------------------------- records

def extract(text: str, kind: str = "text/markdown", *, title: str = "",
            known_names: Iterable[str] = ()) -> list[MemoryRecord]:
    """The memory records of a document (none when `recognise` finds it is not one). `title` names a
    document without a heading; `known_names` are entity names to find whatever their case."""
    document = read_document(text, title)
    names = _Names(text, known_names)
    read = {"adr": _decision, "postmortem": _failure, "review-comments": _review}.get(_recognised(document, kind))
    return [r for r in read(document, names) if r.text or r.title] if read else []


def _author(document: Document) -> str:
    return next((document.meta[k] for k in ("author", "deciders", "owner") if document.meta.get(k)), "")


def _decision(document: Document, names: _Names) -> list[MemoryRecord]:
    keys = ("decision",) if document.prose("decision") else ("preamble", "other")
    decision = document.prose(*keys)
    context, consequences = document.prose("context"), document.prose("consequences")
    stated = " ".join([*(s.heading for s in document.of("status")), document.prose("status")])
    status = normalise_status(document.meta.get("status", "") or stated)
    when = parse_date(document.meta.get("date", "")) or parse_date(stated) or parse_date(document.prose("preamble"))
    why = names(document.title, decision)
    # Why: the reasons the decision gives itself ("Chosen option: Sentry, because …"), then its context.
    reasons = next((m.group(1) for m in _BECAUSE.finditer(decision)), "")
    options, drivers = _listed(document, _CONSIDERED), _listed(document, _DRIVERS)
    chosen = _chosen(options, decision)
    line = document.first_line("decision")
    told = _span(document.spans(*keys), line)
    record = MemoryRecord(
        "decision", document.title or _headline(decision), gist(decision), line,
        _author(document), when, status,
        {"rationale": gist(" ".join(filter(None, (reasons, context)))), "consequence": gist(consequences),
         "options": "\n".join(text for *_, text in options), "drivers": "\n".join(text for *_, text in drivers),
         "chosen": chosen[2] if chosen else ""},
        {"why": why, "concerns": _others(names(context, consequences), why)},
        {"text": (told,) if told else (),
         "rationale": (span,) if (span := _joint(_span(document.spans("context")), told if reasons else None)) else (),
         "consequence": (span,) if (span := _span(document.spans("consequences"))) else (),
         "options": tuple((first, last) for first, last, _ in options),
         "drivers": tuple((first, last) for first, last, _ in drivers),
         "chosen": (chosen[:2],) if chosen else ()})
    return [record, *_exceptions(document, names, record)]


def _joint(*spans: Span | None) -> Span | None:
    """The lines from the first to the last of `spans` (a rationale read from the context and the decision's
    own "because …"); None when there are none."""
    given = [s for s in spans if s]
    return (min(s[0] for s in given), max(s[1] for s in given)) if given else None


def _span(spans: list[tuple[int, int, str]], start: int | None = None) -> Span | None:
    """The lines from `start` (else the first block's) to the last block's last line; None without blocks."""
    if not spans:
        return None
    first = min(first for first, _, _ in spans) if start is None else start
    return first, max(first, max(last for _, last, _ in spans))


_BECAUSE = re.compile(r"\b(?:because|since|given that|so that)\b,?\s+(.+)$", re.IGNORECASE | re.DOTALL)
_CONSIDERED = re.compile(r"considered options|options considered|alternatives considered|^options$|^alternatives$",
                         re.IGNORECASE)
_DRIVERS = re.compile(r"decision drivers|^drivers$", re.IGNORECASE)
# An option marked as the one taken ("…: chosen.", "(selected)"), not one marked as passed over.
_TAKEN = re.compile(r"(?<!not )\b(?:chosen|selected|adopted|preferred|our choice)\b", re.IGNORECASE)


def _listed(document: Document, heading: re.Pattern[str]) -> list[tuple[int, int, str]]:
    """The items, with their lines, of the "Considered Options" or "Decision Drivers" section (MADR),
    not the pros and cons under an option's own heading."""
    return [(first, last, gist(text, OPTION_LIMIT)) for section in document.of("options")
            if heading.search(section.heading.strip())
            for first, last, text in block_spans(section.body, document.meta_lines)]


def _chosen(options: list[tuple[int, int, str]], decision: str) -> tuple[int, int, str] | None:
    """The option the decision took: the one marked as taken, else the only one whose name the decision
    text names ("Chosen option: Sentry, because …").

    >>> _chosen([(3, 3, "Kafka: fast"), (4, 4, "RabbitMQ: chosen.")], "")[2]
    'RabbitMQ: chosen.'
    >>> _chosen([(3, 3, "Kafka - fast"), (4, 4, "RabbitMQ")], 'Chosen option: "Kafka", because it scales.')[2]
    'Kafka - fast'
    """
    marked = [o for o in options if _TAKEN.search(o[2])]
    if len(marked) == 1:
        return marked[0]
    named = [o for o in options if find_name(option_name(o[2]), decision)]
    return named[0] if len(named) == 1 else None


def option_name(text: str) -> str:
    """An option as its name: "Sentry" of "[Sentry](https://sentry.io/) - hosted", "Option 1: Kafka"."""
    return re.split(r"\s+[-–—]\s+|:\s", text, maxsplit=1)[0].strip(" `*")[:120]


def _failure(document: Document, names: _Names) -> list[MemoryRecord]:
    summary = document.prose("summary", "incident") or document.prose("preamble") or document.prose("impact")
    # Incident logs without a root-cause section tell it in their context ("the deletion script targeted live-1").
    cause_keys = ("root-cause",) if document.prose("root-cause") else ("context",)
    impact, cause = document.prose("impact"), document.prose(*cause_keys)
    actions = document.spans("action-items")
    # When it happened: a date in the title ("DNS Outage on 2023-01-25") before the report's own date.
    when = parse_date(document.title) or parse_date(document.meta.get("date", "")) or \
        parse_date(document.prose("preamble")) or parse_date(summary)
    record = MemoryRecord(
        "failure-pattern", document.title or _headline(summary), gist(summary),
        document.first_line("summary", "incident"), _author(document), when,
        fields={"impact": gist(impact), "root-cause": gist(cause), "action-items": "\n".join(t for *_, t in actions)},
        relations={"affected": names(summary, impact), "caused-by": names(cause)},
        lines={"impact": (span,) if (span := _span(document.spans("impact"))) else (),
               "root-cause": (span,) if (span := _span(document.spans(*cause_keys))) else (),
               "action-items": tuple((first, last) for first, last, _ in actions)})
    lessons = [MemoryRecord("memory", _headline(lesson), gist(lesson), line, record.author, when,
                            relations={"concerns": names(lesson)}) for line, lesson in document.blocks("lessons")
               if not lesson.endswith(":")]  # "We learned:" introduces the lessons
    return [record, *lessons, *_exceptions(document, names, record)]


def _review(document: Document, names: _Names) -> list[MemoryRecord]:
    records = []
    for comment in signed_comments(document):
        about = f"{document.title}: comment" if document.title else "Comment"
        on = f" on {comment.date}" if comment.date else ""
        memory = MemoryRecord("memory", f"{about} by {comment.author}{on}",
                              gist(comment.text), comment.line, comment.author, comment.date,
                              relations={"concerns": _others(names(comment.text), [comment.author])})
        records += [memory, *_granted(comment.line, comment.text, names, memory)]
    return records


def _headline(text: str, limit: int = 100) -> str:
    return gist(next(iter(_sentences(text)), ""), limit)


def _others(found: list[str], taken: Iterable[str]) -> list[str]:
    seen = {t.casefold() for t in taken}
    return [n for n in found if n.casefold() not in seen]


# ---------------------------------------------------------------- exceptions to policy

_POLICY_PHRASE = (r"(?:(?!(?:to|from|of|for|the|an?|is|are|was|be|until|because|and|or)\b)[\w/-]+\s+){0,4}?"
                  r"(?:polic(?:y|ies)|standards?|guidelines?|mandates?|rules?|requirements?|principles?)\b")
_GRANT = re.compile(
    r"\b(?:granted|given|grants?|giving|approved|receives?|received|allowed)\s+(?:an?\s+|the\s+)?(?:[\w-]+\s+)?"
    r"(?:exception|exemption|waiver)s?\b|\bexempt(?:ed)?\s+from\b"
    rf"|\b(?:exception|exemption|waiver)s?\s+(?:to|from)\s+(?=(?:the\s+|our\s+)?{_POLICY_PHRASE})", re.IGNORECASE)
_POLICY = re.compile(rf"\s*(?:(?:to|from|of|for|under)\s+)?(?:(?:the|our|this|its)\s+)?(?P<policy>{_POLICY_PHRASE})",
                     re.IGNORECASE)
# Where an item's subject ends: "Storage Gateway may replicate to Nimbus" exempts the Storage Gateway only.
_PREDICATE = re.compile(r"\s(?:may|can|could|is|are|was|were|will|shall|must|gets?|has|have|uses?|runs?|keeps?|"
                        r"stays?|continues?)\b|[:(—–]")


def _exceptions(document: Document, names: _Names, source: MemoryRecord) -> list[MemoryRecord]:
    """Exceptions from an "Exceptions" section (each item one) and from sentences elsewhere granting one."""
    found = []
    for section in document.of("exceptions"):
        for line, text in body_blocks(section.body, document.meta_lines):
            if _GRANT.search(text):
                found += _granted(line, text, names, source)
                continue
            policy = _policy(text) or _policy(section.heading)
            exempted = _others(_subject(text, names) or names(text), names(policy))
            found.append(_exception(line, text, policy, exempted, _others(names(text), exempted + names(policy)),
                                    source))
    elsewhere = [s for s in document.sections if s.key != "exceptions"]
    for line, text in [b for s in elsewhere for b in body_blocks(s.body, document.meta_lines)]:
        found += _granted(line, text, names, source)
    return sorted(found, key=lambda r: r.line)


def _granted(line: int, text: str, names: _Names, source: MemoryRecord) -> list[MemoryRecord]:
    """One exception for the sentences of a paragraph (or comment) granting one: it exempts what a sentence
    names before the grant ("Skyline is granted …"), else what it names after the policy ("… is granted to
    Skyline"). One per paragraph, so that no two records of a kind share a line."""
    granting, policies, exempted = [], [], []
    for sentence in _sentences(text):
        grant = _GRANT.search(sentence)
        if grant:
            stated = _POLICY.match(sentence, grant.end())
            policy = stated["policy"].strip() if stated else ""
            rest = sentence[stated.end() if stated else grant.end():]
            granting.append(sentence)
            policies += [policy] if policy else []
            exempted += _others(_subject(sentence[:grant.start()], names) or names(rest), names(policy) + exempted)
    if not granting:
        return []
    said = " ".join(granting)
    policy = policies[0] if policies else ""
    return [_exception(line, said, policy, exempted, _others(names(said), exempted + names(" ".join(policies))),
                       source)]


def _subject(text: str, names: _Names) -> list[str]:
    """The names before the predicate of `text` ("Storage Gateway may replicate to Nimbus": the Storage
    Gateway), or all its names when that part names none."""
    predicate = _PREDICATE.search(text)
    return (names(text[:predicate.start()]) if predicate else []) or names(text)


def _policy(text: str) -> str:
    stated = _POLICY.search(text)
    return stated["policy"].strip() if stated else ""


def _exception(line: int, text: str, policy: str, exempted: list[str], others: list[str],
               source: MemoryRecord) -> MemoryRecord:
    title = f"Exception to the {policy}" if policy else f"Exception: {_headline(text, 80)}"
    return MemoryRecord("exception", title, gist(text), line, source.author, source.date, source.status,
                        {"policy": policy}, {"excepts": exempted, "concerns": others})
