"""Which phrases of a parsed sentence name an entity, and which entity.

A noun phrase names an entity when one of its words is a name: a proper noun or a named entity of the parser,
a code span, a word shaped like an identifier ("frontend-proxy", "docs.rs", "live-1", "SecretsManager"), an
acronym, a capitalised word inside a sentence, a name the document declares (a heading, a table's first
column, a diagram node), or the word before a kind word ("the cart service"). Case never decides identity and
never drops a name: "Billing calls Ledger" names Billing even when "the billing export" occurs elsewhere. A
pronoun or a bare "this service" names no one by itself; the clause reader resolves it."""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from spacy.tokens import Doc, Span, Token

from tracegraph.base.extraction.names import KIND_WORDS, EntityKind, canonical_name

_PROPER_ENTITIES = frozenset({"ORG", "PRODUCT", "PERSON", "FAC", "WORK_OF_ART", "EVENT", "LAW", "GPE", "LOC"})
_NAME_JOINERS = frozenset("of for de la du von van der &".split())
# Named-entity types that name things; dates, times and amounts never do.
NAME_ENTITIES = frozenset({"ORG", "PRODUCT", "PERSON", "GPE", "FAC", "LOC", "NORP", "WORK_OF_ART", "EVENT",
                           "LAW", "LANGUAGE"})
_IDENTIFIER = re.compile(r"^(?=.*[A-Za-z])(?:[\w]+[-_.:][\w.\-_:]*\w|[A-Z][a-z]+[A-Z]\w*|[A-Za-z]+\d[\w]*|"
                         r"\d+[A-Za-z][\w]*)$")
# Shapes of code, not of names: a file name, a method call, a lowerCamel variable, a flag, a path.
_CODE = re.compile(r"(?i:\.(?:sh|py|go|js|ts|tsx|java|kt|rb|rs|cs|cpp|php|ex|exs|json|ya?ml|toml|md|txt|cfg|conf|"
                   r"ini|xml|html|lock|env|proto|sql|tf|tfvars|erb))$|\(\)$|^[a-z]+[A-Z]|\.[a-z]+[A-Z]|^--?\w|/"
                   r"|^[A-Z0-9]+(?:_[A-Z0-9]+)+$")  # … a file, a call, a variable, a flag, a path, an ENV_VAR
# English compounds written with a hyphen ("built-in", "self-host", "non-Linux", "low-frequency"): words, not names.
_HYPHENATED_WORD = re.compile(r"^(?i:non|self|built|multi|high|low|full|real|open|cross|pre|post|re|co|well|long|"
                              r"short|part|single|double|one|two|three|in|on|off|out|up|over|under|semi|anti|"
                              r"auto|sub|super|inter|intra|first|second|third|third-party|end|time|cloud|user|"
                              r"server|client|front|back)-")
_DOMAIN = re.compile(r"\.(?:io|rs|com|org|net|uk|dev|js|ai|app|cloud|co|gov|is|de|fr|eu|NET|UK)$|^[A-Z][\w]*\.[A-Z]")
_VERSIONISH = re.compile(r"^v?\d+(?:\.\d+)*[a-z]?$", re.I)
_ACRONYM = re.compile(r"^[A-Z][A-Z0-9&]{1,7}s?$")
_ANAPHORS = frozenset("it its they them their this that these those he she him her his".split())
# Words that open sentences or items capitalised without being names.
_NOT_NAMES = frozenset("""i we you us our your my me everyone someone anyone nobody none all each both either
neither other others another some any many most few several one two three first second last next previous
following above below here there today yesterday tomorrow now then yes no ok okay note notes example e.g i.e
etc see also please thanks step steps option options pros cons good bad neutral todo tbd n/a""".split())
_DETERMINERS = frozenset("the a an this that these those our their its his her my your every each no some any".split())


@dataclass(frozen=True, slots=True)
class Mention:
    """An entity named by tokens [start, end) of the doc; `head` is the phrase's head token."""

    start: int
    end: int
    head: int
    label: str
    kind: EntityKind = ""
    version: str = ""  # "Ledger 4.3": the version the phrase names with it


@dataclass(frozen=True, slots=True)
class Anaphor:
    """A phrase that refers back ("it", "this service", "the controller"): `words` are its content words,
    lower case (empty for a pronoun), matched against recent entities by the clause reader."""

    head: int
    words: tuple[str, ...]
    kind: EntityKind = ""


class Lexicon:
    """What the document itself says are names: the names it declares (headings, table subjects, diagram
    nodes, fields) and its code spans, each lower-cased; plus the capitalised words it writes inside sentences."""

    def __init__(self, names: Iterable[str] = (), codes: Iterable[str] = (), capitalised: Iterable[str] = ()) -> None:
        self.names = {n.lower() for n in names if n.strip()}
        self.codes = {c.lower() for c in codes if c.strip()}
        # Names the document itself writes in lower case (`checkout`, a diagram's `cart`): only these make a
        # lower-case word a name; "orders" is a common noun where the document writes the service "Orders".
        self.lower = {n for n in names if n.strip() and n == n.lower()} | self.codes
        self.capitalised = frozenset(capitalised)  # words the document capitalises inside its sentences
        # Declared names of several words, found verbatim whatever the parse: "B Boy" when the parser reads
        # "B" as an adverb, "Lost Boyz" inside "the group Lost Boyz". Written as declared: "the central bank
        # of Sierra Leone" is no mention of the Bank of Sierra Leone.
        phrases = sorted({n for n in names if " " in n.strip() and len(n) > 3}, key=len, reverse=True)
        self.phrases = re.compile(r"(?<![\w-])(?:" + "|".join(re.escape(p) for p in phrases) + r")(?![\w-])") \
            if phrases else None

    def declared(self, text: str) -> bool:
        low = text.lower()
        if text == low and any(c.isalpha() for c in text):
            return low in self.lower
        return low in self.names or low in self.codes


def _namey(token: Token, lexicon: Lexicon) -> bool:
    """Whether this word alone marks its phrase as a name."""
    text = token.text
    low = token.lower_
    if not any(c.isalpha() for c in text) or low in _NOT_NAMES or _VERSIONISH.match(text):
        return False
    if token.text in _MONTHS and token.i > 0 and token.doc[token.i - 1].text[:1].isupper() and \
            not token.doc[token.i - 1].ent_type_ and token.doc[token.i - 1].pos_ == "PROPN":
        return True  # "the Salt March", "the Dandi March": a month's name closing a proper name
    if token.ent_type_ in ("DATE", "TIME", "PERCENT", "MONEY", "QUANTITY", "ORDINAL", "CARDINAL") or \
            (token.i > 0 and re.fullmatch(r"\d{1,2}:\d{2}(?::\d{2})?", token.doc[token.i - 1].text)):
        return False  # "21:17 UTC" is a time
    if _CODE.search(text):
        return False
    if lexicon.declared(text):
        # A lower-case word the document uses as a name ("checkout calls currency") is still a common noun
        # under a determiner or a number ("converts one currency to another").
        return not text.islower() or not any(c.dep_ in ("nummod", "amod", "poss") or c.dep_ == "det" and
                                             c.lower_ not in ("the", "this", "that") for c in token.children)
    if "." in text.strip(".") and not _DOMAIN.search(text):
        return False  # "demo.ad.requests", "app.product.id": a dotted code name, not a host or a product
    if _HYPHENATED_WORD.match(text) and not any(c.isdigit() for c in text):
        return False
    if _IDENTIFIER.match(text) or _ACRONYM.match(text):
        return True
    if not text[:1].isupper() or token.pos_ not in ("PROPN", "NOUN", "ADJ", "X"):
        return False
    if not token.is_sent_start:
        return True  # capitalised inside a sentence
    # Opening a sentence, a capitalised word is a name only on evidence: the document capitalises it inside
    # a sentence too, the parser calls it a proper noun of a named entity, or it is a bare subject ("Billing
    # calls …") — never because it starts the line ("Follow the steps", "Root cause").
    return text in lexicon.capitalised or (token.pos_ == "PROPN" and token.ent_type_ in NAME_ENTITIES) \
        or _bare_subject(token)


def _bare_subject(token: Token) -> bool:
    """A capitalised singular noun opening its sentence as the subject, with no determiner: a name."""
    if token.tag_ == "VBG" or any(c.dep_ == "dobj" for c in token.children):
        return False  # "Testing the build takes an hour": a gerund with its object, not a name ("Billing")
    if token.dep_ in ("compound", "npadvmod") and token.head.pos_ == "VERB" and token.head.i > token.i:
        return token.tag_ not in ("NNS", "NNPS")  # "Billing runs on …" misparsed as a compound of its verb
    head = token
    while head.dep_ in ("compound", "flat", "nmod") and head.head is not head:
        head = head.head
    if head.dep_ not in ("nsubj", "nsubjpass") or head.tag_ in ("NNS", "NNPS"):
        return False
    return not any(c.dep_ == "det" for c in head.children) and head.head.pos_ in ("VERB", "AUX")


def find_mentions(doc: Doc | Span, lexicon: Lexicon) -> tuple[dict[int, Mention], dict[int, Anaphor]]:
    """Every entity the text names (token index → the mention covering it), and the anaphoric phrases
    (head token index → Anaphor)."""
    mentions: dict[int, Mention] = {}
    anaphors: dict[int, Anaphor] = {}
    covered: set[int] = set()
    for span in _fixed_names(doc, lexicon):  # whole names first: a phrase the parse splits stays one name
        name = canonical_name(span.text)
        if name.label and not covered & set(range(span.start, span.end)):
            m = Mention(span.start, span.end, span.root.i, name.label, _kind(span, name.kind))
            for i in range(span.start, span.end):
                mentions[i] = m
            covered.update(range(span.start, span.end))
    for chunk in _phrases(doc):
        if covered & set(range(chunk.start, chunk.end)):
            rest = [t for t in chunk if t.i not in covered]
            if not rest or chunk.root.i in covered:
                continue
            chunk = chunk.doc[rest[0].i:rest[-1].i + 1]
        found = _mention(chunk, lexicon)
        if found is None:
            anaphor = _anaphor(chunk, lexicon)
            if anaphor:
                anaphors[anaphor.head] = anaphor
            found_inner = list(_inner_names(chunk, lexicon))
            for m in found_inner:
                for i in range(m.start, m.end):
                    mentions[i] = m
                covered.update(range(m.start, m.end))
            continue
        for i in range(found.start, found.end):
            mentions[i] = found
        covered.update(range(chunk.start, chunk.end))
    for ent in getattr(doc, "ents", ()):  # named entities outside any noun phrase ("… over gRPC")
        if ent.label_ in NAME_ENTITIES and not covered & set(range(ent.start, ent.end)):
            name = canonical_name(ent.text)
            if name.label and any(_namey(t, lexicon) for t in ent):
                m = Mention(ent.start, ent.end, ent.root.i, name.label, _kind(ent, name.kind))
                for i in range(ent.start, ent.end):
                    mentions[i] = m
    return mentions, anaphors


def _fixed_names(doc: Doc | Span, lexicon: Lexicon) -> list[Span]:
    """Spans that are one name whatever the parse says: declared names of several words, and the parser's
    named entities of several capitalised words, "of" names included ("Journal of Mathematical Physics",
    "Ministry of Justice")."""
    base = doc if isinstance(doc, Doc) else doc.doc
    offset = 0 if isinstance(doc, Doc) else doc.start_char
    found: list[Span] = []
    if lexicon.phrases is not None:
        for m in lexicon.phrases.finditer(doc.text):
            span = base.char_span(offset + m.start(), offset + m.end(), alignment_mode="expand")
            if span is not None:
                found.append(span)
    chunks = [(c.start, c.end) for c in doc.noun_chunks]
    for ent in getattr(doc, "ents", ()):
        if any(start <= ent.start and ent.end <= end for start, end in chunks):
            continue  # inside one noun phrase: the phrase decides ("AWS Certificate Manager", not "AWS Certificate")
        words = [t for t in ent if t.is_alpha or _IDENTIFIER.match(t.text)]
        while words and words[0].lower_ in ("the", "a", "an"):
            words = words[1:]
        if ent.label_ in _PROPER_ENTITIES and len(words) >= 2 and words[0].text[:1].isupper() and \
                all(t.text[:1].isupper() or t.lower_ in _NAME_JOINERS for t in words) and \
                not any(_CODE.search(t.text) for t in words):
            found.append(base[words[0].i:ent.end])
    found += _quoted(base, doc.start if isinstance(doc, Span) else 0, doc.end if isinstance(doc, Span) else len(base))
    return sorted(_disjoint(found), key=lambda s: s.start)


_QUOTES = frozenset('"“”')


def _quoted(doc: Doc, start: int, end: int) -> list[Span]:
    """Quoted titles of works: "All You Need Is Love" is one name, its small words included."""
    marks = [t.i for t in doc[start:end] if t.text in _QUOTES]
    found = []
    for left, right in zip(marks[::2], marks[1::2]):
        inner = doc[left + 1:right]
        words = [t for t in inner if t.is_alpha]
        if 1 <= len(inner) <= 12 and words and inner[0].text[:1].isupper() and \
                all(t.text[:1].isupper() or len(t.text) <= 4 for t in words):
            found.append(inner)
    return found


def _disjoint(spans: list[Span]) -> list[Span]:
    """The longest spans that do not overlap."""
    kept: list[Span] = []
    for span in sorted(spans, key=lambda s: (s.end - s.start), reverse=True):
        if all(span.end <= k.start or span.start >= k.end for k in kept):
            kept.append(span)
    return kept


def _phrases(doc: Doc | Span) -> list[Span]:
    """Noun phrases: the parser's base noun chunks, and single nouns or proper nouns it left outside them
    (a compound cut off by a misparse, a name in a list)."""
    chunks = list(doc.noun_chunks)
    inside = {i for c in chunks for i in range(c.start, c.end)}
    base = doc if isinstance(doc, Doc) else doc.doc
    singles = [base[_left_edge(t):t.i + 1] for t in doc if t.i not in inside and t.pos_ in ("PROPN", "NOUN", "X")
               and (t.dep_ != "compound" or t.head.pos_ == "VERB")]
    return sorted(chunks + singles, key=lambda s: s.start)


def _left_edge(token: Token) -> int:
    """Where a noun starts with its compounds ("Fluent Bit" when the parser left "Bit" alone)."""
    start = token.i
    while start > 0 and token.doc[start - 1].dep_ == "compound" and token.doc[start - 1].head.i in range(start, token.i + 1):
        start -= 1
    return start


def _content(chunk: Span) -> list[Token]:
    """The phrase without leading determiners, possessive pronouns and quantifiers."""
    tokens = list(chunk)
    while tokens and (tokens[0].dep_ in ("det", "predet") or tokens[0].lower_ in _DETERMINERS
                      or (tokens[0].pos_ == "PRON" and tokens[0].dep_ == "poss") or tokens[0].is_punct):
        tokens = tokens[1:]
    while tokens and tokens[-1].is_punct:
        tokens = tokens[:-1]
    return tokens


def _mention(chunk: Span, lexicon: Lexicon) -> Mention | None:
    """The entity a noun phrase names as a whole, or None: its root must be a name, or a kind word right after
    one ("the Ledger service", "the cart service", "a Kafka topic")."""
    tokens = _content(chunk)
    if not tokens:
        return None
    root = chunk.root
    if root.pos_ == "PRON" or root not in tokens:
        return None
    end = root.i + 1
    whole = " ".join(t.text for t in tokens)
    if "_" in whole:
        return None  # SPANNER_CONNECTION_STRING, max_retries: a variable or setting, not a thing the text is about
    if len(tokens) > 1 and (lexicon.declared(whole) or lexicon.declared(whole.replace(" ", "-"))):
        name = canonical_name(whole)
        return Mention(tokens[0].i, end, root.i, name.label, _kind(chunk, name.kind))
    kind_word = KIND_WORDS.get(root.lower_)
    if _VERSIONISH.match(root.text) and root.i - 1 >= tokens[0].i and _namey(root.doc[root.i - 1], lexicon):
        named = root.doc[root.i - 1]  # "Ledger 4.3": Ledger, at version 4.3
        start = _name_start(tokens, named, lexicon)
        name = canonical_name(root.doc[start:named.i + 1].text)
        return Mention(start, end, named.i, name.label, name.kind, version=root.text.lstrip("vV")) \
            if name.label else None
    if _namey(root, lexicon):
        start = _name_start(tokens, root, lexicon)
    elif kind_word and root.i - 1 >= tokens[0].i and not _indefinite(chunk, lexicon):
        before = root.doc[root.i - 1]
        named = [t for t in tokens[:tokens.index(root)] if _namey(t, lexicon)]
        if named and not _namey(before, lexicon):  # "a Valkey caching service": Valkey
            last = named[-1]
            start = _name_start(tokens, last, lexicon)
            name = canonical_name(root.doc[start:last.i + 1].text)
            return Mention(start, last.i + 1, last.i, name.label, kind_word[0]) if name.label else None
        if not (_namey(before, lexicon) or (before.pos_ in ("NOUN", "PROPN") and before.dep_ == "compound")):
            return None
        start = _name_start(tokens, before, lexicon, lowercase=not _namey(before, lexicon))
        described = root.doc[start:root.i]
        if len(described) > 1 and all(t.is_lower for t in described) and not lexicon.declared(described.text):
            return None  # "the revision control system": a description, unless the document names it so
    else:
        return None
    if any(c.dep_ == "nummod" and c.like_num for c in root.children):
        return None  # "two Histograms", "one browser VU": a number of things, not a name
    text = root.doc[start:end].text
    name = canonical_name(text)
    if not name.label or name.label.lower() in _NOT_NAMES:
        return None
    return Mention(start, end, root.i, name.label, _kind(chunk, name.kind))


def _indefinite(chunk: Span, lexicon: Lexicon) -> bool:
    """"a PHP based service", "a message queue service": a kind of thing described, not a named one ("a Kafka
    topic" still names Kafka)."""
    before = chunk.doc[chunk.root.i - 1] if chunk.root.i > chunk.start else None
    return any(t.dep_ == "det" and t.lower_ in ("a", "an", "another", "some", "any", "each", "every") for t in chunk) \
        and not (before is not None and _namey(before, lexicon) and not before.is_lower)


def _name_start(tokens: list[Token], last: Token, lexicon: Lexicon, lowercase: bool = False) -> int:
    """Where the name ending at `last` starts: back over the names and compound nouns joined to it
    ("AWS Load Balancer Controller", "product catalog" before "service"), stopping at an adjective or a
    verb ("a PHP based service" names nothing)."""
    start = last.i
    for token in reversed(tokens[:tokens.index(last)] if last in tokens else []):
        if token.i != start - 1:
            break
        joined = token.dep_ in ("compound", "nmod", "flat", "amod", "nummod", "punct") or token.pos_ == "PROPN"
        if not joined or token.is_punct and token.text not in ("-", "."):
            break
        proper = token.text[:1].isupper() or token.pos_ == "PROPN" or lexicon.declared(token.text)
        if not ((_namey(token, lexicon) and (proper or lowercase or not last.text[:1].isupper()))
                or (lowercase and token.pos_ == "NOUN" and token.dep_ == "compound")
                or (token.pos_ in ("PROPN", "NUM") and token.dep_ in ("compound", "nummod", "flat"))):
            break  # "self-host Jenkins" is Jenkins: a lower-case modifier is no part of a proper name
        start = token.i
    return start


def _inner_names(chunk: Span, lexicon: Lexicon) -> Iterable[Mention]:
    """Names inside a phrase that is not itself one: "Christopher Nolan" in "Christopher Nolan's brother"."""
    tokens = _content(chunk)
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token is chunk.root or not _namey(token, lexicon):
            i += 1
            continue
        j = i
        while j + 1 < len(tokens) and tokens[j + 1] is not chunk.root and _namey(tokens[j + 1], lexicon):
            j += 1
        name = canonical_name(" ".join(t.text for t in tokens[i:j + 1]))
        if name.label and name.label.lower() not in _NOT_NAMES:
            yield Mention(tokens[i].i, tokens[j].i + 1, tokens[j].i, name.label, name.kind)
        i = j + 1


def _anaphor(chunk: Span, lexicon: Lexicon) -> Anaphor | None:
    """"it", "they", "this service", "the controller": a phrase with no name of its own that refers back."""
    root = chunk.root
    if root.pos_ == "PRON":
        if root.lower_ in ("he", "she", "him", "his", "her"):
            return Anaphor(root.i, (), "person")
        return Anaphor(root.i, ()) if root.lower_ in _ANAPHORS else None
    determiners = [t for t in chunk if t.dep_ == "det"]
    if not determiners or determiners[0].lower_ not in ("the", "this", "that", "these", "those"):
        return None
    words = tuple(t.lower_ for t in _content(chunk) if not t.is_punct)
    if not words or any(_namey(t, lexicon) for t in _content(chunk)):
        return None
    kind = KIND_WORDS.get(root.lower_, ("", False))[0]
    return Anaphor(root.i, words, kind)


def _kind(span: Span | Iterable[Token], from_words: EntityKind) -> EntityKind:
    """The kind a kind word gave ("the Billing squad" is a team). The parser's PERSON alone decides nothing: the
    small model calls "Corvid Analytics" and "Kafka" people; a person is known from a role (clauses.py)."""
    del span
    return from_words


def person_like(span: Span | Iterable[Token]) -> bool:
    """Two to four capitalised plain words the parser calls a PERSON ("Ana Ruiz", "Jake Goulding")."""
    tokens = [t for t in span if t.is_alpha or _INITIAL.fullmatch(t.text)]
    if len(tokens) >= 3 and all(_INITIAL.fullmatch(t.text) is None for t in (tokens[0], tokens[-1])):
        tokens = [t for t in tokens if _INITIAL.fullmatch(t.text) is None]  # "Emil B. Fischer"
    if len(tokens) >= 2 and _REGNAL.fullmatch(tokens[-1].text):
        tokens = tokens[:-1]  # "Nicholas I", "Henry VIII"
        return len(tokens) >= 1 and all(t.ent_type_ == "PERSON" and _NAME_WORD.fullmatch(t.text) for t in tokens)
    return 2 <= len(tokens) <= 4 and all(t.ent_type_ == "PERSON" and _NAME_WORD.fullmatch(t.text) for t in tokens)


_MONTHS = frozenset("January February March April May June July August September October November December".split())
_NAME_WORD = re.compile(r"[A-Z][a-z'’-]+")
_REGNAL = re.compile(r"[IVX]{1,5}")
_INITIAL = re.compile(r"[A-Z]\.")


def names_in(mentions: dict[int, Mention]) -> list[Mention]:
    """Each mention once, in text order."""
    return sorted(set(mentions.values()), key=lambda m: m.start)


def declared_names(texts: Collection[str]) -> list[str]:
    """Names a document declares in its structure, trimmed to the name ("`cart`", "Cart Service" → Cart)."""
    return [n.label for n in (canonical_name(t) for t in texts) if n.label]
