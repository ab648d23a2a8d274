"""Which relation a question asks about, as the graph walk and the offline NL→SPARQL templates
both need to know it: word stems shared by the question and a predicate's label, and the words
that name a query type's relations."""

from __future__ import annotations

import re

# Words of predicate labels that name a query type's relations. They look at labels ("depends on",
# "owned by", "supplied by"), not questions, so passive forms count; the router has its own patterns.
RELATION_CUES: dict[str, re.Pattern[str]] = {
    "dependency": re.compile(r"depend|\buse|\brel(?:y|ies|ied)\b|requir|\bcall|import|\bruns? on\b|"
                             r"\bbu(?:y|ys|ying|ought)\b|suppl(?:y|ies|ied|ier)", re.I),
    "ownership": re.compile(r"\bown|maintain|operat|\bru(?:n|ns|nning)\b(?!\s+on\b)|manag|responsib|chief|"
                            r"\blead|\bled\b|found", re.I),
}

_WORD = re.compile(r"[a-z]{3,}")
_SUFFIXES = ("ing", "ies", "ed", "es", "er", "s")
_STOP = frozenset("the and for that which what who whom whose with from has have had its was were are this these "
                  "those does did not any all how why when where into onto".split())


def stem(word: str) -> str:
    """A light English stemmer, enough to match a question's verb with a predicate label.

    >>> [stem(w) for w in ("owns", "owned", "depends", "maintained", "supplies", "runs")]
    ['own', 'own', 'depend', 'maintain', 'suppl', 'run']
    """
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def content_stems(text: str) -> set[str]:
    """The stems of a text's words of three letters or more, function words left out.

    >>> sorted(content_stems("Who owns the service that Helios Grid depends on?"))
    ['depend', 'grid', 'helio', 'own', 'service']
    """
    return {stem(w) for w in _WORD.findall(text.lower()) if w not in _STOP}
