"""The entity names a question mentions, found offline (no model), for grounding.

Questions are not documents: a title is often quoted and has lower-case words inside ("'The Man
Who Sold the World'"), a Wikipedia-style name carries its disambiguation ("B Boy (song)"), and
"X and Y" more often names two things to compare than one company. So names here are capitalised
runs joined over the connectors the offline extractor uses (flow/kg_extract/offline.py), plus
quoted titles kept whole and a following parenthetical kept attached. Leading articles are
stripped as the offline extractor strips them, so that a name matches the labels it wrote."""

from __future__ import annotations

import re

# Lower-case words that may join capitalised words inside one name ("Journal of the Royal Society").
_CONNECTORS = frozenset("of the de del della da di du des la le van von der den for upon y".split())
_MAX_CONNECTORS = 2  # "Lord of the Rings"
# "X and Y" is one name only when both sides are one word ("Procter and Gamble") and the question
# does not compare two things ("Are Christopher Nolan and Sathish Kalathil both directors?").
_COMPARISON = re.compile(r"\b(?:both|either|neither|between)\b", re.I)
_ARTICLES = frozenset({"the", "a", "an"})
# Words capitalised only because they start a sentence, or too common to name anything alone.
_COMMON = frozenset("""a an the this that these those it its i we you they he she me us them my our your their his her
who whom whose what which when where why how whats whos is are was were be been being am do does did done has have had
can could should would will shall may might must not no yes and or but if so than then also too only just very
in on at for from by with of to as into onto upon about over under after before during since until while through
across along around near between among against within without via per toward towards behind beyond both either
neither all any some each every many much most more other another one name list give tell show find identify
describe explain compare please besides according hi hello there here""".split())
CALENDAR_WORDS = frozenset("""january february march april may june july august september october november december
monday tuesday wednesday thursday friday saturday sunday""".split())

_QUOTED = re.compile(
    r"“([^”]+)”"                                         # “curly double”
    r"|‘((?:[^’\n]|’(?=\w))+?)’(?!\w)"                   # ‘curly single’, with apostrophes inside
    r"|(?<!\w)\"([^\"\n]+)\""                            # "straight double"
    r"|(?<![\w'])'(?=\S)((?:[^'\n]|'(?=\w))+?)(?<=\S)'(?!\w)"  # 'straight single': 'Don't Stop Me Now'
)
_TOKEN = re.compile(r"[^\W_](?:[\w'’.&-]*[\w.])?|[^\w\s]")
_PARENTHETICAL = re.compile(r"\s*\(([^()]{1,60})\)")
_POSSESSIVE = re.compile(r"['’]s$")
_ABBREVIATION = re.compile(r"(?:[A-Za-z]\.){2,}$|\b(?:Jr|Sr|St|Dr|Mr|Mrs|Ms|Inc|Ltd|Co|Corp)\.$")
_ORDINAL = re.compile(r"\d+(?:st|nd|rd|th)")
_SENTENCE_END = frozenset(".?!:;")
# Bounds that keep one request's work small whatever a caller sends: names are read from the first
# SCAN_LIMIT characters, a longer "name" is a quoted passage, and each name becomes a lookup.
SCAN_LIMIT = 20_000
MAX_NAME_LENGTH = 200
MAX_NAMES = 32

Run = list[re.Match[str]]


def question_names(question: str) -> list[str]:
    """Names in order of appearance, each once: at most MAX_NAMES, each at most MAX_NAME_LENGTH
    characters, from the first SCAN_LIMIT characters of the question.

    >>> question_names("What is the record label of the performer of B Boy (Song)?")
    ['B Boy (Song)']
    >>> question_names("Who was the first president of the association which published Journal of Psychotherapy Integration?")
    ['Journal of Psychotherapy Integration']
    >>> question_names("Which band recorded “The Man Who Sold the World” before Nirvana's cover?")
    ['The Man Who Sold the World', 'Nirvana']
    >>> question_names("The Beatles signed with which label?")
    ['Beatles']
    """
    question = _head(question, SCAN_LIMIT)
    found: list[tuple[int, str]] = []
    unquoted, done = [], 0  # the question with each quote (and its parenthetical) blanked out, in pieces
    for quote in _QUOTED.finditer(question):
        title = next(g for g in quote.groups() if g is not None).strip()
        end = _with_parenthetical(question, quote.end())
        if title:
            found.append((quote.start(), title + question[quote.end():end]))
        start = max(quote.start(), done)
        if end > start:
            unquoted += [question[done:start], "|" * (end - start)]  # "|" ends any run
            done = end
    masked = "".join([*unquoted, question[done:]])
    found += _capitalised_names(question, masked)
    names: dict[str, str] = {}
    for _, name in sorted(found, key=lambda f: f[0]):
        if len(name) <= MAX_NAME_LENGTH:
            names.setdefault(name.casefold(), name)
            if len(names) == MAX_NAMES:
                break
    return list(names.values())


def _head(text: str, limit: int) -> str:
    """The first `limit` characters, without a word cut in two at the end.

    >>> _head("Helios Grid depends on Corvid", 15), _head("short", 15)
    ('Helios Grid', 'short')
    """
    if len(text) <= limit:
        return text
    cut = limit
    while cut > 0 and not text[cut].isspace():
        cut -= 1
    return text[: cut or limit]


def _capitalised_names(question: str, masked: str) -> list[tuple[int, str]]:
    """(offset, name) of each capitalised run in `masked` (quotes blanked out), cut from `question`
    so that spacing, hyphens and "&" stay as written."""
    found, consumed = [], 0
    for run in _join_pairs(_runs(list(_TOKEN.finditer(masked))), masked):
        if run[0].start() < consumed:
            continue  # inside a parenthetical already attached to the name before it
        # A disambiguation after it marks a title even at a sentence start: "Hello (Lionel Richie song)".
        opening = _sentence_start(masked, run[0].start()) and not _PARENTHETICAL.match(question, run[-1].end())
        run = _trimmed(run, opening)
        if not run or not _is_name(run, opening):
            continue
        start, end = run[0].start(), _name_end(run[-1])
        if end == run[-1].end():
            end = consumed = _with_parenthetical(question, end)
        found.append((start, question[start:end]))
    return found


def _runs(tokens: list[re.Match[str]]) -> list[Run]:
    """Capitalised words joined over up to two connectors; a possessive or a full stop ends a run."""
    runs, i = [], 0
    while i < len(tokens):
        if not _starts_name(tokens, i):
            i += 1
            continue
        run, j = [tokens[i]], i + 1
        while j < len(tokens) and not _ends_run(run[-1].group()):
            gap = _connectors_before_name(tokens, j)
            if gap is None:
                break
            run += tokens[j: j + gap + 1]
            j += gap + 1
        runs.append(run)
        i = j
    return runs


def _ends_run(word: str) -> bool:
    """ "Obama's" and "Store." end a name; "F.C." does not."""
    return bool(_POSSESSIVE.search(word)) or (word.endswith(".") and not _ABBREVIATION.search(word))


def _starts_name(tokens: list[re.Match[str]], i: int) -> bool:
    word = tokens[i].group()
    if _capital(word):
        return True
    # "20th Century Fox": an ordinal starts a name only when a capitalised word follows it.
    return bool(_ORDINAL.fullmatch(word)) and i + 1 < len(tokens) and _capital(tokens[i + 1].group())


def _connectors_before_name(tokens: list[re.Match[str]], j: int) -> int | None:
    """How many connectors stand between the run and its next word at `j` (0: `j` is one), or None.
    A number continues a run directly ("Apollo 11") but never after a connector."""
    for gap in range(_MAX_CONNECTORS + 1):
        if j + gap >= len(tokens):
            return None
        word = tokens[j + gap].group()
        if _capital(word) or (gap == 0 and word[0].isdigit()):
            return gap
        if word.lower() not in _CONNECTORS:
            return None
    return None


def _join_pairs(runs: list[Run], masked: str) -> list[Run]:
    """Merge "X & Y" always, and "X and Y" when both are single words and nothing is compared."""
    comparing = bool(_COMPARISON.search(masked))
    merged: list[Run] = []
    for run in runs:
        if merged:
            last = merged[-1]
            between = masked[last[-1].end(): run[0].start()].strip()
            single = len(last) == 1 and len(run) == 1 and not _POSSESSIVE.search(last[-1].group())
            if between == "&" or (between == "and" and single and not comparing):
                merged[-1] = last + run
                continue
        merged.append(run)
    return merged


def _trimmed(run: Run, opening: bool) -> Run:
    """Without leading question words ("Who", "Is") where they open a sentence, leading articles
    anywhere, and trailing connectors."""
    leading = _COMMON if opening else _ARTICLES
    while run and _bare(run[0]).lower() in leading:
        run = run[1:]
    while run and run[-1].group().lower() in _CONNECTORS:
        run = run[:-1]
    return run


def _is_name(run: Run, opening: bool) -> bool:
    """Not a date, and not a lone common word opening a sentence. Inside a sentence a capitalised
    common word is a title ("The Who", "Will", "Hello"), unless it is one letter ("I")."""
    words = [_bare(t).rstrip(".") for t in run]
    named = [w for w in words if w and not w[0].isdigit() and w.lower() not in _CONNECTORS]
    if not named or all(w.lower() in CALENDAR_WORDS for w in named):
        return False  # "May 2010" is a date
    if len(words) == 1:
        word = words[0]
        acronym = word.isupper() and len(word) > 1  # "US", "WHO"
        return len(word) >= 2 and (acronym or not opening or word.lower() not in _COMMON)
    return True


def _bare(token: re.Match[str]) -> str:
    return _POSSESSIVE.sub("", token.group())


def _name_end(last: re.Match[str]) -> int:
    """Before a possessive "'s", and before a full stop unless it belongs to an abbreviation
    ("F.C." keeps its stop, "Paris." does not)."""
    word = last.group()
    possessive = _POSSESSIVE.search(word)
    if possessive:
        return last.start() + possessive.start()
    if word.endswith(".") and not _ABBREVIATION.search(word):
        return last.start() + len(word.rstrip("."))
    return last.end()


def _with_parenthetical(question: str, end: int) -> int:
    """The end of a parenthetical right after a name ("B Boy (song)"), else `end` unchanged."""
    found = _PARENTHETICAL.match(question, end)
    return found.end() if found and found.group(1).strip() else end


def _sentence_start(text: str, at: int) -> bool:
    """Whether only white space stands between `at` and a sentence end (or the start); read
    backwards from `at`, never by copying the text before it (that made long questions quadratic)."""
    while at > 0 and text[at - 1].isspace():
        at -= 1
    return at == 0 or text[at - 1] in _SENTENCE_END


def _capital(word: str) -> bool:
    """Any upper-case letter: "Helios", "iPhone", "al-Assad", "3M"."""
    return any(c.isupper() for c in word)
