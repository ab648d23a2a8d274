"""Intent check (RSN-09): does a change (a PR's summary or diff) say the same thing as the work item it
is linked to? Both sides are embedded and compared by cosine; below the threshold the PR gets a soft
advisory, with the sentence pairs that came closest as the explanation."""

from __future__ import annotations

import itertools
import re
from collections.abc import Awaitable, Callable, Sequence

import numpy as np

from tracegraph.base.errors import TraceGraphError
from tracegraph.base.llm.embeddings import unit_rows
from tracegraph.schemas.architecture import IntentResponse, SentenceMatch

ADVISORY = ("The code changes in this PR appear semantically distant from the linked project item. "
            "Confirm that this PR addresses the correct work item.")
DEFAULT_THRESHOLD = 0.6
MAX_PIECES = 64  # per side: one model call of ~130 short texts stays well under a second on 2 cores
WINDOW_CHARS = 1000  # about what the bundled model reads (256 word pieces) before it cuts a text
PIECE_CHARS = 160  # a diff's code words are grouped into pieces of a line or two (measured: 120-160 best)

Embed = Callable[[Sequence[str]], Awaitable[list[list[float]]]]


class NothingToCompare(TraceGraphError, ValueError):
    """A side of the check holds no words (only whitespace)."""

    error_type = "bad-request"


async def check(change: str, work_item: str, embed: Embed, *, threshold: float = DEFAULT_THRESHOLD,
                nearest: int = 3, model: str = "") -> IntentResponse:
    """How close `change` (a PR's summary and/or diff) is to `work_item` (the linked item's description):
    the cosine of the two sides' directions, flagged as a mismatch below `threshold`, explained by each
    side's `nearest` sentences that come closest to the other side.

    A side is represented by the normalised mean of its sentence vectors, whatever its length: the
    bundled model reads only ~1,000 characters, so a diff or a long item embedded whole would be judged
    by its first lines. The mean also suits short texts better than embedding them whole: on eight
    PR summaries and their work items, the whole-text cosine ranged 0.54-0.81 (three under 0.6), the
    mean 0.64-0.87, while unrelated pairs from the same product stayed under 0.45 either way. One
    representation for every length keeps the threshold meaning the same thing. `embed` is called once.
    """
    ours, theirs = sentences(change), sentences(work_item)
    for side, pieces in (("change", ours), ("work-item", theirs)):
        if not pieces:
            raise NothingToCompare(f"the {side} has no words to compare")
    vectors = unit_rows(np.asarray(await embed([*ours, *theirs]), dtype=np.float64))
    change_vectors, item_vectors = vectors[:len(ours)], vectors[len(ours):]
    similarity = round(float(_direction(change_vectors) @ _direction(item_vectors)), 4)
    pairs = change_vectors @ item_vectors.T
    mismatch = similarity < threshold
    return IntentResponse(
        similarity=similarity, threshold=threshold, mismatch=mismatch, advisory=ADVISORY if mismatch else "",
        explanation=[*_closest("change", ours, theirs, pairs, nearest),
                     *_closest("work-item", theirs, ours, pairs.T, nearest)],
        model=model)


def _direction(vectors: np.ndarray) -> np.ndarray:
    """The normalised mean of unit vectors: where a side's sentences point together."""
    mean = vectors.mean(axis=0)
    return mean / max(float(np.linalg.norm(mean)), 1e-12)


def _closest(side: str, ours: list[str], theirs: list[str], pairs: np.ndarray, count: int) -> list[SentenceMatch]:
    """Our `count` sentences with the closest counterpart on the other side, closest first."""
    best = pairs.argmax(axis=1)
    ranked = sorted(range(len(ours)), key=lambda i: -pairs[i, best[i]])[:max(count, 0)]
    return [SentenceMatch(side=side, sentence=ours[i], nearest=theirs[best[i]],
                          similarity=round(float(pairs[i, best[i]]), 4)) for i in ranked]

# --- prose ----------------------------------------------------------------------------------------

_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[`]?[A-Z0-9])")
_LIST_MARK = re.compile(r"^\s*(?:#{1,6}\s+|>\s*|[-*+•]\s+(?:\[[ xX]\]\s+)?|\d+[.)]\s+)")


def sentences(text: str) -> list[str]:
    """The pieces a side is compared by: prose as sentences, a unified diff as its meaningful content
    (the summary lines, then the added and removed code as words, with the changed files' paths), at
    most `MAX_PIECES`, none longer than the model reads.

    >>> sentences("Add retries to webhooks. Events that fail 5 times go to a dead-letter queue.")
    ['Add retries to webhooks.', 'Events that fail 5 times go to a dead-letter queue.']
    >>> sentences("## Acceptance criteria:\\n- [ ] retries use exponential backoff\\n- alert on DLQ growth")
    ['Acceptance criteria: retries use exponential backoff', 'alert on DLQ growth']
    """
    pieces = _diff_pieces(text) if is_diff(text) else []
    return _fit(pieces or _prose_sentences(text))  # a diff with no words left is read as it is


def _prose_sentences(text: str) -> list[str]:
    out: list[str] = []
    pending = ""  # a heading or label, prefixed to the next sentence
    for line in text.splitlines():
        line = " ".join(_LIST_MARK.sub("", line).split())
        for sentence in _SENTENCE_END.split(line) if line else ():
            sentence = f"{pending} {sentence}".strip()
            pending = ""
            if sentence.endswith(":") or len(sentence.split()) < 3:  # a label or heading: "Context", "Why:"
                pending = sentence
            else:
                out.extend(_within_window(sentence))
    if pending:
        if out and len(out[-1]) + len(pending) < WINDOW_CHARS:
            out[-1] = f"{out[-1]} {pending}"
        else:
            out.append(pending)
    return out


def _within_window(text: str) -> list[str]:
    """A text cut at word boundaries into parts the model reads whole."""
    parts, part = [], ""
    for word in text.split():
        if part and len(part) + 1 + len(word) > WINDOW_CHARS:
            parts.append(part)
            part = ""
        part = f"{part} {word}" if part else word
    return [*parts, part] if part else parts


# --- unified diffs --------------------------------------------------------------------------------

_DIFF_START = re.compile(r"^(?:diff --git |--- \S|\+\+\+ \S|@@ -\d)", re.MULTILINE)
_GIT_METADATA = re.compile(
    r"^(?:commit [0-9a-f]{7,}|From [0-9a-f]{7,}|(?:Author|AuthorDate|Commit|CommitDate|Date|From|Merge|"
    r"Signed-off-by|Co-authored-by|Reviewed-by|Change-Id):|index [0-9a-f]|(?:new|deleted) file mode|"
    r"similarity index|rename (?:from|to) |old mode|new mode|-- ?$|"
    r"\s*\d+ files? changed|\s*\S+\s+\|\s+(?:\d+|Bin))", re.IGNORECASE)
_SUBJECT = re.compile(r"^Subject:\s*(?:\[[^\]]*\]\s*)?", re.IGNORECASE)
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
# Words every line of code is full of; they say nothing about what the change is for.
_NOISE_WORDS = """
    def class return self cls import from if else elif for while in not and or is none null nil true false
    const let var function func fn async await public private protected static void int str bool float string
    new this try except catch finally raise throw throws pass with as lambda yield of to the a an do end then
    elif begin val println printf print args kwargs isinstance len dict list set tuple type any object
    err ctx ok td th tr div span br
    java py js ts go rs rb cpp h hpp md txt json yaml yml toml cfg ini lock
"""
_CODE_NOISE = frozenset(_NOISE_WORDS.split())


def is_diff(text: str) -> bool:
    """Whether `text` holds a unified diff (with or without git's commit header).

    >>> is_diff("--- a/x.py\\n+++ b/x.py\\n@@ -1 +1 @@\\n-a\\n+b"), is_diff("Fix the +++ operator")
    (True, False)
    """
    return bool(re.search(r"^@@ -\d", text, re.MULTILINE)) and bool(_DIFF_START.search(text))


def code_words(line: str) -> str:
    """A line of code as the words in it: identifiers split on `_` and camelCase, lower case, with the
    keywords and names every program uses left out.

    >>> code_words("    retryDelay = compute_backoff(attempt, base=HTTPTimeout)  # jittered")
    'retry delay compute backoff attempt base http timeout jittered'
    """
    words = (part.lower() for token in _WORD.findall(line) for piece in token.split("_")
             for part in _CAMEL.findall(piece))
    kept = (w for w in words if len(w) > 1 and not w.isdigit() and w not in _CODE_NOISE)
    return " ".join(dict.fromkeys(kept))  # each word once: `response = response or response` says it once


def path_words(path: str) -> str:
    """A file path as words, its extension dropped.

    >>> path_words("services/webhooks/retryPolicy.py")
    'services webhooks retry policy'
    """
    return code_words(re.sub(r"\.[A-Za-z0-9]+$", "", path).replace("/", " "))


def _diff_pieces(text: str) -> list[str]:
    """Summary sentences first, then per file its path and its changed code as words in pieces of about
    `PIECE_CHARS`, each distinct line once (repeated boilerplate counts once)."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if _DIFF_START.match(line))
    summary = [_SUBJECT.sub("", line) for line in lines[:start] if not _GIT_METADATA.match(line)]
    pieces = _prose_sentences("\n".join(summary))
    seen: set[str] = set()
    group = ""

    def flush() -> None:
        nonlocal group
        if group:
            pieces.append(group)
        group = ""

    for number in range(start, len(lines)):
        line = lines[number]
        if line.startswith("diff --git ") or _is_file_header(lines, number):
            path = re.sub(r"^[ab]/", "", line.split()[-1])
            flush()
            words = path_words(path) if path != "/dev/null" else ""
            if words and words not in seen:
                seen.add(words)
                pieces.append(f"file {words}")
            continue
        if line.startswith("@@"):
            flush()
            words = code_words(line.rpartition("@@")[2])  # the enclosing function git names
        elif line.startswith(("+", "-")):
            words = code_words(line[1:])
        else:
            continue  # context lines: unchanged code says nothing about the change
        if not words or words in seen:
            continue
        seen.add(words)
        if group and len(group) + 1 + len(words) > PIECE_CHARS:
            flush()
        group = f"{group} {words}" if group else words
    flush()
    return pieces


def _is_file_header(lines: list[str], number: int) -> bool:
    """A `--- old` / `+++ new` line pair, rather than removed or added code that starts with dashes."""
    line = lines[number]
    if line.startswith("--- "):
        return number + 1 < len(lines) and lines[number + 1].startswith("+++ ")
    return line.startswith("+++ ") and number > 0 and lines[number - 1].startswith("--- ")


# --- fitting a side into MAX_PIECES ----------------------------------------------------------------


def _fit(pieces: list[str], limit: int = MAX_PIECES) -> list[str]:
    """At most `limit` pieces: neighbours merged shortest pair first while the merge fits the model's
    window, then (only if still too many) the pieces with the fewest distinct words left out."""
    pieces = [p for p in pieces if p.strip()]
    while len(pieces) > limit:
        pairs = [(len(a) + len(b), i) for i, (a, b) in enumerate(itertools.pairwise(pieces))]
        size, i = min(pairs, default=(WINDOW_CHARS + 1, 0))
        if size >= WINDOW_CHARS:
            break
        pieces[i:i + 2] = [f"{pieces[i]} {pieces[i + 1]}"]
    if len(pieces) > limit:
        keep = sorted(range(len(pieces)), key=lambda i: -len(set(pieces[i].lower().split())))[:limit]
        pieces = [pieces[i] for i in sorted(keep)]
    return pieces
