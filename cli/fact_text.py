"""Facts as a person reads them on a terminal: entities and relations by name rather than IRI, dates
without a midnight's zeros, and the `--format table|json` choice that the history and review
commands share."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from typing import Any

from tracegraph.base.provenance.uris import ENTITY_BASE, RELATION_BASE, entity_uri
from tracegraph.base.provenance.vocab import READABLE_PREDICATES
from tracegraph.cli._client import show_term, term_json

LITERAL_WIDTH = 80  # a table cell's share of a long literal (a definition, a quote); --format json has it whole


def readable(term: dict, labels: Mapping[str, str] | None = None) -> str:
    """A wire term as words: a literal's text on one line (a long one cut short); an IRI's label
    from `labels` (IRI → label, as the temporal service sends them), else an extracted entity's or
    relation's name, a known predicate's phrase, or `<iri>`.

    >>> readable({"t": "i", "i": ENTITY_BASE + "helios-grid"}), readable({"t": "l", "v": "42"})
    ('helios grid', '42')
    >>> readable({"t": "i", "i": "urn:x"}), readable({"t": "i", "i": "urn:x"}, {"urn:x": "X Corp"})
    ('<urn:x>', 'X Corp')
    >>> readable({"t": "l", "v": "two\\nlines " + "x" * 100})[:12], len(readable({"t": "l", "v": "x" * 100}))
    ('two lines xx', 80)
    """
    kind = term.get("t")
    if kind == "l":
        text = " ".join(term.get("v", "").split())
        return text if len(text) <= LITERAL_WIDTH else text[:LITERAL_WIDTH - 1] + "…"
    if kind == "t":
        quoted = term["tr"]
        return "<< " + " ".join(readable(quoted[part], labels) for part in ("s", "p", "o")) + " >>"
    iri = term.get("i", "")
    if labels and iri in labels:
        return labels[iri]
    for base in (ENTITY_BASE, RELATION_BASE):
        if kind == "i" and iri.startswith(base):
            return iri.removeprefix(base).replace("-", " ")
    return READABLE_PREDICATES.get(iri) or show_term(term)


def readable_fact(fact: dict, by_position: Mapping[str, str] | None = None) -> str:
    """`subject predicate object` in words, preferring the names in `by_position` (s/p/o → label,
    as a review item carries them)."""
    return " ".join((by_position or {}).get(part) or readable(fact[part]) for part in ("s", "p", "o"))


def short_instant(instant: str | None) -> str:
    """A canonical instant, its time dropped at midnight; `` for none.

    >>> short_instant("2025-06-01T00:00:00Z"), short_instant("2025-06-01T09:30:00Z"), short_instant(None)
    ('2025-06-01', '2025-06-01T09:30:00Z', '')
    """
    return (instant or "").removesuffix("T00:00:00Z")


def entity_iri(text: str) -> str:
    """An entity as given on the command line: an IRI as it is, or a label as the entity it names.

    >>> entity_iri("urn:e:1"), entity_iri("Helios Grid") == ENTITY_BASE + "helios-grid"
    ('urn:e:1', True)
    """
    term = term_json(text)
    return term["i"] if term["t"] == "i" else entity_uri(text)


def add_format_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", choices=["table", "json"], default="table",
                        help="a table for reading, or the gateway's JSON response for scripts [table]")


def print_json(response: dict[str, Any]) -> None:
    print(json.dumps(response, indent=2, ensure_ascii=False))


def note_truncated(response: dict[str, Any], what: str, hint: str) -> None:
    """Say on stderr, so that a script's stdout stays clean, that the list `what` was cut short."""
    if response.get("truncated"):
        print(f"(more {what} than the limit; showing the first {len(response.get(what, [])):,}; {hint})",
              file=sys.stderr)
