"""The offline extractor: a document's blocks → facts, each placed on the lines it was read from.

Structure first, then prose: a `Key: value` field or a table row whose header names a relation ("Owning team",
"Depends on", "Version") states it of the section's subject; a list under a "Dependencies" heading (or item)
lists what the section's subject depends on; a Mermaid flowchart's arrows are calls; and every paragraph, list
item and descriptive table cell is parsed (spaCy) into clauses. The subject of a section is the entity its
heading names, else the document's subject (its title, when that names a thing, or its folder for a README).
Everything is labelled `tg:extractor "offline"` by the caller; each fact carries the strength of its rule."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from spacy.tokens import Doc, Span

from tracegraph.base.extraction import mermaid, nlp
from tracegraph.base.extraction import vocabulary as vocab
from tracegraph.base.extraction.blocks import Block, outline, read_blocks
from tracegraph.base.extraction.clauses import (
    COPULAR_DEFINITION, IMPERATIVES, VERB_FORMS, Found, Repair, SentenceReading, Topic, read_sentence, repaired,
)
from tracegraph.base.extraction.facts import Confidence, Extraction, Lines, Relation, strongest
from tracegraph.base.extraction.mentions import Lexicon
from tracegraph.base.extraction.names import KIND_WORDS, canonical_name, clean, handles_in
from tracegraph.schemas.ingest import DocumentContext

FIELD = Confidence(0.9, "offline structure: a field or table column naming the relation")
LISTED = Confidence(0.85, "offline structure: a list item under a heading naming the relation")
DIAGRAM = Confidence(0.9, "offline structure: an arrow of a Mermaid flowchart")
ALIASED = Confidence(0.8, "offline structure: a second name given in brackets")

# Titles that name a kind of document, not a thing: "Demo Architecture" is no entity.
_DOCUMENT_WORDS = frozenset("""architecture overview introduction readme documentation docs guide design notes
summary purpose requirements changelog changes roadmap faq contributing glossary index status update updates
announcement release releases report postmortem post-mortem incident review retrospective rfc adr proposal
decision decisions plan meeting minutes handbook runbook playbook policy process how-to tutorial""".split())
_SUBJECT_COLUMNS = ("service", "services", "name", "component", "components", "system", "application", "app",
                    "module", "team", "repository", "repo", "microservice", "package", "library", "tool", "product")
_DESCRIPTION_COLUMNS = ("description", "purpose", "summary", "what it does", "notes", "details", "role",
                        "responsibility", "responsibilities", "function", "comment", "comments")
_SPLIT_VALUES = re.compile(r"\s*(?:,|;|\band\b|&|\+|/(?=\s)|\n)\s*")
_MAX_NAME_WORDS = 6
_PATH = re.compile(r"^[\w.-]*/")
_ITEM_LEAD = re.compile(r"^(?P<name>[^:—–(]{1,60}?)\s*(?:[:—–(]|\s-\s|$)")


def document_context(blocks: Sequence[Block], title: str = "", path: str = "", plain: bool = False) -> DocumentContext:
    """The context of a whole document, from all its blocks (the chunker computes it once per document).
    `title` is the library's title, `path` its path; a plain-text passage (`plain`) is about its title."""
    names: list[str] = []
    for block in blocks:
        names += [c for c in block.codes if _code_name(c)]
        if block.kind == "row" and block.cells and _subject_column(block.header) is not None:
            names.append(block.cells[_subject_column(block.header) or 0])
        if block.kind == "code" and mermaid.is_flowchart(block.text):
            for edge in mermaid.edges(block.text):
                names += [edge.source.name, edge.target.name, edge.source.id, edge.target.id]
        if block.kind == "heading" and canonical_name(block.text).kind:
            names.append(block.text)
    subject = title.strip() if plain and "/" not in title else _subject(blocks, title, path)
    if subject:
        names += [subject, *_short_forms(subject, keep_case=True)]  # "B Boy (song)" is written "B Boy"
    capitalised = set()
    for block in blocks:
        if block.kind in ("paragraph", "item", "row"):
            capitalised.update(re.findall(r"(?<=[\w,;)] )[A-Z][\w.'’-]*", block.text))
    cleaned = [n.label for n in (canonical_name(clean(n)) for n in names) if n.label and
               len(n.label.split()) <= _MAX_NAME_WORDS]
    cleaned += [subject] if subject and len(subject.split()) > _MAX_NAME_WORDS else []
    return DocumentContext(subject=subject, names=tuple(dict.fromkeys(cleaned)), capitalised=tuple(sorted(capitalised)))


def _code_name(code: str) -> bool:
    """A code span that names something (`cart`, `frontend-proxy`), not a command, path, variable or call."""
    return bool(re.fullmatch(r"[A-Za-z][\w.-]{1,40}", code)) and not code.startswith("-") and "." not in code[-1:] \
        and not re.match(r"^[a-z]+[A-Z]|^[A-Z0-9]+(?:_[A-Z0-9]+)+$", code) and \
        ("." not in code or bool(re.search(r"\.(?:io|rs|com|org|net|dev|js|ai)$", code)))


def _subject(blocks: Sequence[Block], title: str, path: str) -> str:
    """The document's subject: its title when that names a thing ("Cart Service" → Cart), else its file
    (a README or index page is about its folder: src/cart/README.md → cart)."""
    about = outline(blocks)
    for candidate in (about.fields.get("linktitle", ""), about.title, title):
        if "/" in candidate or "\\" in candidate:
            continue  # a path given as the title: read below
        name = canonical_name(candidate)
        words = name.label.split()
        if name.label and len(words) <= 4 and not re.match(r"^[\d#]", name.label) and \
                words[-1].lower() not in _DOCUMENT_WORDS and not re.search(r"[.!?:]$|\s-\s", candidate.strip()) \
                and not re.search(r"\b(?:19|20)\d\d\b", candidate):  # "DNS Outage on 2023-01-25" is an event
            return name.label
    if path:
        parts = [p for p in re.split(r"[\\/]", path) if p]
        stem = re.sub(r"(\.[A-Za-z0-9]+)+$", "", parts[-1]) if parts else ""
        if stem.lower().lstrip("_") in ("readme", "index") and len(parts) > 1:
            stem = parts[-2]
        if stem and stem.lower() not in _DOCUMENT_WORDS and not re.match(r"^\d", stem) and stem.count("-") <= 1:
            return stem  # "accounting.md", "frontend-proxy/index.md"; not "dns-outage-postmortem.md"
    return ""


def extract_text(text: str, title: str = "", *, markdown: bool = True, path: str = "",
                 model: str | None = None) -> Extraction:
    """Read a whole text (its blocks and their context) into facts: what tests and benchmarks call."""
    blocks = read_blocks(text, markdown)
    return extract(blocks, document_context(blocks, title, path, plain=not markdown), model=model)


def extract(blocks: Sequence[Block], context: DocumentContext, model: str | None = None) -> Extraction:
    """The facts of a chunk's blocks, read in the document's context."""
    return _Reader(context, model).read(blocks)


_PROSE_VALUE_WORDS = 4  # an unknown field's value this long is read as prose


@dataclass(slots=True)
class _Pending:
    """A text to parse, where its characters sit (block, offset of the text in the block's text), and the
    topic its sentences continue."""

    block: Block
    text: str
    offset: int
    topic: Topic
    item_subject: str = ""  # a row's subject: what "It …" in its description means
    source: str = ""  # the text before its asides were blanked out (same length as `text`)


@dataclass(slots=True)
class _Reader:
    context: DocumentContext
    model: str | None = None
    result: Extraction = field(default_factory=Extraction)
    lexicon: Lexicon = field(init=False)
    people: set[str] = field(default_factory=set)  # capitalised names of several words seen so far
    opening: _Pending | None = None  # the first text to parse: its first sentence is the subject's fallback context

    def __post_init__(self) -> None:
        self.lexicon = Lexicon(self.context.names, capitalised=self.context.capitalised)
        if self.context.subject:
            self.result.definitions.setdefault(self.context.subject, "")

    def read(self, blocks: Sequence[Block]) -> Extraction:
        """The facts of the blocks, structure first, then their prose in one batch through the parser."""
        pending: list[_Pending] = []
        topics: dict[tuple[str, ...], Topic] = {}
        intro: tuple[str, tuple[str, bool]] | None = None  # a paragraph ending "…:" that names a relation
        for block in blocks:
            subject = self._section_subject(block)
            topic = topics.setdefault(block.headings, Topic(default=subject))
            listing = _listing(block) or (intro[1] if intro and block.kind in ("item", "field") else None)
            listed_subject = intro[0] if intro and not _listing(block) and intro[0] else subject
            if block.kind == "code":
                self._diagram(block)
            elif block.kind == "field" and block.level and listing:
                self._listed(block.model_copy(update={"kind": "item", "text": f"{block.key}: {block.text}"}),
                             listed_subject, listing)
            elif block.kind == "field" and not self._field(block, subject, block.key):
                if len(block.text.split()) >= _PROSE_VALUE_WORDS:  # "Note: Billing calls Ledger", or a title
                    # with a colon opening a sentence: the line is prose, its key included
                    line = _without_asides(f"{block.key}: {block.text}")
                    pending.append(_Pending(block, line, len(block.key) + 2, topic))
            elif block.kind == "row":
                pending += self._row(block, subject)
            elif block.kind in ("item", "paragraph") and not _heading_like(block):
                if block.kind == "item" and listing:
                    self._listed(block, listed_subject, listing)
                marked = _names_marked(block)
                text, component = _component_tag(_without_asides(marked))
                clause, added = _as_clause(text)
                pending.append(_Pending(block, clause, added, Topic(default=component) if component else topic,
                                        source=" " * added + marked))
            elif block.kind == "heading" and block.text.split(" ", 1)[0].lower() in IMPERATIVES:
                # A title stating a decision ("Replace Terraform Cloud backend with AWS S3")
                pending.append(_Pending(block, *_as_clause(re.sub(r"^[\d.#)\s]+", "", block.text)), topic))
            if block.kind == "paragraph" or block.kind == "heading":
                intro = _introduced(block.text, subject) if block.kind == "paragraph" else None
        self.opening = pending[0] if pending else None
        self._parse(pending)
        self.result.relations = strongest(self.result.relations)
        return self.result

    # ------------------------------------------------------------ subjects

    def _section_subject(self, block: Block) -> str:
        """The entity the nearest heading naming one names ("## Ledger service"), else the document's."""
        for heading in reversed(block.headings):
            name = canonical_name(heading)
            if name.label and (name.kind or self.lexicon.declared(name.label)) and \
                    len(name.label.split()) <= 4 and not _listing_relation(heading):
                return name.label
        return self.context.subject

    # ------------------------------------------------------------ structure

    def _relate(self, subject: str, label: str, obj: str, confidence: Confidence, lines: Lines, *,
                value: bool = False, phrase: str = "", since: str = "", reverse: bool = False) -> None:
        if not subject or not obj or subject.casefold() == obj.casefold():
            return
        s, o = (obj, subject) if reverse and not value else (subject, obj)
        self.result.relations.append(Relation(s, label, o, confidence, value=value, lines=lines, phrase=phrase,
                                              since=since))
        self.result.definitions.setdefault(s, "")
        if not value:
            self.result.definitions.setdefault(o, "")

    def _field(self, block: Block, subject: str, key: str) -> bool:
        """`Owner: Billing squad`, `Depends on: Ledger, Tax`, `Version: 4.2`, `Aliases: checkoutservice`;
        False when the key names no relation."""
        label = vocab.FIELD_RELATIONS.get(_key(key))
        if label is None:
            return False
        if not subject:
            return True
        lines = (block.first, block.last)
        if label in (vocab.VERSION, vocab.STATUS, vocab.CODE_PATH):
            value = _field_value(label, block)
            if value:
                self._relate(subject, label, value, FIELD, lines, value=True, phrase=key.lower())
            return True
        for name in self._names_in_value(block.text, owners=vocab.family_of(label) == "ownership"):
            if label == vocab.ALIAS and (_slug_like(name) or name.casefold() == subject.casefold()):
                continue  # a URL alias of a page ("service-table", "cart"), not another name of the thing
            self._relate(subject, label, name, FIELD, lines, phrase=key.lower())
        return True

    def _names_in_value(self, text: str, owners: bool = False) -> list[str]:
        """The names a field or cell lists: "Billing squad, @aruiz" → Billing squad, aruiz (handles kept)."""
        names = []
        for part in _SPLIT_VALUES.split(text):
            part = clean(re.sub(r"\([^)]*\)", "", part))
            handles = handles_in(part)
            if handles and owners:
                handle = handles[0]
                name = handle.lstrip("@").rsplit("/", 1)[-1] if "@" in handle[:1] else handle
                self.result.handles.setdefault(name, set()).add(handle)
                self.result.kinds.setdefault(name, "team" if "/" in handle else "person")
                names.append(name)
                continue
            found = canonical_name(part)
            if found.label and 0 < len(found.label.split()) <= _MAX_NAME_WORDS and not _PATH.match(found.label):
                if found.kind:
                    self.result.kinds.setdefault(found.label, found.kind)
                names.append(found.label)
        return names

    def _row(self, block: Block, subject: str) -> list[_Pending]:
        """A table row: with a subject column, each header that names a relation states it of the row's
        subject, and a description column is parsed with the row's subject as "it"; a two-column table
        without one is a list of fields of the section's subject."""
        header = tuple(_key(h) for h in block.header)
        column = _subject_column(block.header)
        if column is None:
            if len(block.cells) == 2:  # | Owning team | Billing squad |
                self._field(_as_field(block), subject, block.cells[0])
            return []
        row_subject = canonical_name(block.cells[column]).label if column < len(block.cells) else ""
        if not row_subject or len(row_subject.split()) > _MAX_NAME_WORDS:
            return []
        self.result.definitions.setdefault(row_subject, "")
        pending = []
        for k, cell in enumerate(block.cells):
            if k == column or k >= len(header) or not cell.strip():
                continue
            if header[k] in vocab.FIELD_RELATIONS:
                self._field(_as_field(block, cell), row_subject, block.header[k])
            elif header[k] in _DESCRIPTION_COLUMNS:
                text, offset = _as_clause(cell, subjectless=True)
                pending.append(_Pending(block, text, offset, Topic(default=row_subject), row_subject))
        return pending

    def _listed(self, block: Block, subject: str, listing: tuple[str, bool]) -> None:
        """An item of a list that names a relation by its heading, parent item or introducing sentence:
        "## Dependencies" / "- Ledger", "Billing depends on:" / "- Ledger", "### Maintainers" / "- [Ana Ruiz](…)"."""
        label, reverse = listing
        name = _lead_name(block)
        if not name:
            return
        self._relate(subject, label, name, LISTED, (block.first, block.last), phrase=label, reverse=reverse)
        for handle in [*handles_in(block.text), *_profile_handles(block)]:
            self.result.handles.setdefault(name, set()).add(handle)
        if vocab.family_of(label) == "ownership":
            kind = "person" if _person_like(name) else "team" if canonical_name(name).kind == "team" else ""
            if kind:
                self.result.kinds.setdefault(name, kind)

    def _diagram(self, block: Block) -> None:
        """Each arrow of a Mermaid flowchart: the source calls the target (uses it, when the target is drawn as
        a database; a database drawn as the source delivers to the target, which consumes from it)."""
        if not (block.info.lower() == "mermaid" or mermaid.is_flowchart(block.text)):
            return
        for edge in mermaid.edges(block.text):
            source, target = _node_name(edge.source), _node_name(edge.target)
            if not source or not target:
                continue
            line = block.first + 1 + edge.line  # the fence line comes first
            lines = (line, line)
            phrase = f"→ over {edge.label}" if edge.label else "→"
            if _datastore(edge.source):
                self._relate(target, vocab.CONSUMES_FROM, source, DIAGRAM, lines, phrase=phrase)
            elif _datastore(edge.target):
                self._relate(source, vocab.USES, target, DIAGRAM, lines, phrase=phrase)
            else:
                self._relate(source, vocab.CALLS, target, DIAGRAM, lines, phrase=phrase)
            for node, name in ((edge.source, source), (edge.target, target)):
                if _datastore(node):
                    self.result.kinds.setdefault(name, "datastore")
                other = node.name if name != node.name else node.alias
                if other and other != name and not KIND_WORDS.get(other.lower()):
                    self._relate(name, vocab.USES, other, ALIASED, lines, phrase=f"({other})")

    # ------------------------------------------------------------ prose

    def _parse(self, pending: list[_Pending]) -> None:
        docs = nlp.parse((p.text for p in pending), self.model)
        for item, doc in zip(pending, docs, strict=True):
            self._read(item, doc)

    def _read(self, item: _Pending, doc: Doc) -> None:
        for sentence in doc.sents:
            if not item.block.reads(max(0, sentence.start_char - item.offset)):
                read_sentence(sentence, self.lexicon, item.topic)  # another chunk's part: it only moves the topic
                continue
            repair = repaired(sentence)
            target: Span = sentence
            if repair is not None:
                target = next(iter(nlp.pipeline(self.model)(repair.text).sents))
            reading = read_sentence(target, self.lexicon, item.topic)
            start = item.block.line_at(max(0, sentence.start_char - item.offset))
            end = item.block.line_at(max(0, sentence.end_char - 1 - item.offset))
            self._record(reading, (start, end), repair)
            subject = self.context.subject
            if subject and subject not in self.result.contexts and \
                    (any(self._unify(m.label) == subject for m in reading.mentions) or item is self.opening):
                # The sentence that names the subject, else the text's first: what its embedding is found by.
                self.result.contexts[subject] = " ".join(sentence.text.split())
        self._read_asides(item, doc)

    def _read_asides(self, item: _Pending, doc: Doc) -> None:
        """"Gisvi (born 6 March 1982 in Windhoek, …) is …": the aside blanked out for the main clause's parse is
        read as a clause of its own about the name before it ("Gisvi was born … in Windhoek")."""
        clauses = []
        subject = self.context.subject
        for at, clause in _asides(item.source):
            before = item.source[:at].rstrip()
            name = subject if subject and before.endswith(subject) else _name_before(doc, at)
            if name and item.block.reads(max(0, at - item.offset)):
                line = item.block.line_at(max(0, at - item.offset))
                clauses.append((f"{name} {clause}.", (line, line)))
        for (_, lines), parsed in zip(clauses, nlp.parse((text for text, _ in clauses), self.model)):
            for sentence in list(parsed.sents)[:1]:
                self._record(read_sentence(sentence, self.lexicon, item.topic), lines, None)

    def _record(self, reading: SentenceReading, lines: Lines, repair: Repair | None) -> None:
        """What one sentence states, into the result."""
        for found in reading.relations:
            self._found(repair.restore(found) if repair else found, lines)
        for mention in reading.mentions:
            self.result.definitions.setdefault(self._unify(mention.label), "")
            if mention.kind:
                self.result.kinds.setdefault(self._unify(mention.label), mention.kind)
        for label, kind in reading.kinds.items():
            self.result.kinds.setdefault(self._unify(label), kind)
        if reading.definition:
            label, phrase = reading.definition
            label = self._unify(label)
            if not self.result.definitions.get(label):
                self.result.definitions[label] = phrase
                self.result.definition_lines[label] = lines
                self.result.definition_confidence[label] = COPULAR_DEFINITION

    def _found(self, found: Found, lines: Lines) -> None:
        s, o = self._unify(found.subject), found.object if found.value else self._unify(found.object)
        if s == o:
            return
        self.result.relations.append(Relation(s, found.predicate, o, found.confidence, value=found.value,
                                              lines=lines, phrase=found.phrase, since=found.since))
        self.result.definitions.setdefault(s, "")
        if not found.value:
            self.result.definitions.setdefault(o, "")

    def _unify(self, label: str) -> str:
        """One entity, however the document writes it: the subject's own names ("B Boy" for the title "B Boy
        (song)", "Fraud Detection Service" for Fraud Detection, "Christopher Edward Nolan" for Christopher
        Nolan), a declared name with a kind word after it, and a surname alone for the one person of the
        document who has it ("Hall" after "G. Stanley Hall")."""
        subject = self.context.subject
        key = label.lower()
        bare = key.rsplit(" ", 1)[0] if " " in key and KIND_WORDS.get(key.rsplit(" ", 1)[1], ("", True))[1] is False \
            else key
        if subject and label != subject and (key in _short_forms(subject) or bare == subject.lower()
                                             or _fuller(label, subject)):
            return subject
        if bare in self.lexicon.names:  # the spelling the document declares: `quote`, not the parser's "Quote"
            return next((n for n in self.context.names if n.lower() == bare), label)
        if " " not in label and label[:1].isupper():
            holders = {n for n in self.people if n.split()[-1] == label}
            holders = {n for n in holders if not any(o != n and o.endswith(" " + n) for o in holders)}
            if len(holders) == 1:  # "Stanley Hall" is part of "G. Stanley Hall": one person
                return holders.pop()
        elif 2 <= len(label.split()) <= 4 and all(w[:1].isupper() for w in label.split()):
            self.people.add(label)
        return label


def _as_clause(text: str, subjectless: bool = False) -> tuple[str, int]:
    """(text to parse, characters added before the block's text): a description opening with a verb ("Stores
    the items in Redis") gets "It" as its subject, which the topic resolves to what it describes; an item or
    title in the imperative ("Replace Locust with k6") opens with its verb in lower case, so that the parser
    reads a verb rather than a name."""
    pad = len(text) - len(text.lstrip(" "))
    first = text[pad:].split(" ", 1)[0]
    rest = text[pad + len(first):]
    if re.fullmatch(r"[A-Z][a-z]+(?:s|es)", first) and (first.lower() in VERB_FORMS or subjectless) or \
            subjectless and re.fullmatch(r"[A-Z][a-z]+ly", first):
        return text[:pad] + "It " + first.lower() + rest, 3
    if first.lower() in IMPERATIVES and first[:1].isupper():
        return text[:pad] + first.lower() + rest, 0
    return text, 0


_ASIDE = re.compile(r"\((?:born|died|b\.|d\.|c\.|circa|n[ée]e|also known as|aka|formerly|[A-Z][a-z]+:|"
                    r"\d{3,4}\b)[^()]*\)", re.IGNORECASE)


def _without_asides(text: str) -> str:
    """Text for the parser with biographical and translation asides blanked out, same length ("Christopher
    Nolan (born 30 July 1970) is …", "The Countess of Parma (Italian: La contessa di Parma) is …"), and
    typewriter quotes (``like this'') made plain."""
    text = text.replace("``", '" ').replace("''", ' "')
    return _ASIDE.sub(lambda m: " " * len(m.group(0)), text)


# An aside that says something of the name before it, and the clause it makes: "(born 6 March 1982 in
# Windhoek)" → "… was born 6 March 1982 in Windhoek"; "(also known as Niklot I; …)" → "… is also known as …".
_ASIDE_CLAUSES = ((re.compile(r"^(?:born|b\.)\s+", re.I), "was born "), (re.compile(r"^(?:died|d\.)\s+", re.I), "died "),
                  (re.compile(r"^(?:also known as|aka|a\.k\.a\.)\s+", re.I), "is also known as "))


def _asides(text: str) -> list[tuple[int, str]]:
    """(where it starts, the clause it states) for each aside of `text` that says something of its name."""
    found = []
    for m in _ASIDE.finditer(text):
        inner = m.group(0)[1:-1].split(";")[0].strip()
        for pattern, clause in _ASIDE_CLAUSES:
            if pattern.match(inner):
                found.append((m.start(), clause + pattern.sub("", inner).rstrip(" ,")))
    return found


def _name_before(doc: Doc, at: int) -> str:
    """The capitalised name that ends right before character `at` ("Gisvi Isaque Andrade Antunes (born …")."""
    words = [t for t in doc if t.idx + len(t.text) <= at]
    name: list[str] = []
    while words and (words[-1].text[:1].isupper() or name and words[-1].lower_ in ("of", "de", "van", "von", "da")):
        name.insert(0, words.pop().text)
    while name and not name[0][:1].isupper():
        name.pop(0)
    return " ".join(name)


def _component_tag(text: str) -> tuple[str, str]:
    """A changelog item's "[component] " prefix blanked out (same length) and the component it names."""
    tag = re.match(r"^\[([\w ,./-]{1,40})\]\s+", text)
    if not tag or "," in tag.group(1):
        return text, ""
    return " " * tag.end() + text[tag.end():], canonical_name(tag.group(1)).label


def _short_forms(title: str, keep_case: bool = False) -> set[str]:
    """How a text names its titled subject for short (lower case unless `keep_case`): "B Boy" for "B Boy
    (song)", "Rachal" for "Rachal, Texas", "Laramie Project" for "The Laramie Project"."""
    base = re.sub(r"\s*\([^()]*\)$", "", title)
    forms = {base, base.split(",", 1)[0], re.sub(r"^(?:The|A|An)\s+", "", base)}
    return {f.strip() if keep_case else f.strip().lower() for f in forms if f.strip()}


def _fuller(label: str, name: str) -> bool:
    """A longer form of a name: "Christopher Edward Nolan" for "Christopher Nolan" (same first and last word,
    the name's words in order)."""
    words, target = label.split(), re.sub(r"\s*\([^()]*\)$", "", name).split()
    if len(target) < 2 or len(words) <= len(target) or words[0] != target[0] or words[-1] != target[-1]:
        return False
    rest = iter(words)
    return all(part in rest for part in target)


def _heading_like(block: Block) -> bool:
    """A paragraph that is really a heading: a few capitalised words without a full stop ("Database Calls
    Instrumentation"). Its words are a title, not a clause."""
    words = block.text.split()
    return block.kind == "paragraph" and 0 < len(words) <= 6 and block.text[-1:] not in ".!?:" and \
        all(w[:1].isupper() or w.lower() in ("of", "and", "the", "for", "in", "to", "a") for w in words)


def _names_marked(block: Block) -> str:
    """The block's text with each code span that is a name capitalised, so the parser reads "queries `quote`
    for price quotes" as naming quote (same length: line places stay right)."""
    text = block.text
    for code in {c for c in block.codes if _code_name(c) and c[:1].islower()}:
        text = re.sub(rf"(?<![\w-]){re.escape(code)}(?![\w-])", code[:1].upper() + code[1:], text)
    return text


def _field_value(label: str, block: Block) -> str:
    """A field's literal value: a version number ("v4.2" → 4.2), a status word, a repository path."""
    text = clean(block.text)
    if label == vocab.VERSION:
        return text.split(" ")[0].lstrip("vV") if re.match(r"v?\d", text) else ""
    if label == vocab.CODE_PATH:
        path = next((c for c in block.codes if "/" in c), text.split(" ")[0])
        return path if re.fullmatch(r"[\w./-]+/?", path) and "/" in path else ""
    return text.lower() if len(text) <= 40 else ""


def _key(text: str) -> str:
    return " ".join(re.sub(r"[*_`:]", " ", text).lower().split())


def _subject_column(header: Sequence[str]) -> int | None:
    keys = [_key(h) for h in header]
    return next((k for k, h in enumerate(keys) if h in _SUBJECT_COLUMNS), None)


def _as_field(block: Block, value: str | None = None) -> Block:
    return block.model_copy(update={"kind": "field", "text": value if value is not None else block.cells[1],
                                    "key": block.cells[0]})


_INTRO_SUBJECT = re.compile(r"(?<![\w@-])([A-Z][\w.&'’-]*(?:\s+(?:of\s+|the\s+)?[A-Z][\w.&'’-]*)*)")
_PROFILE = re.compile(r"^https?://(?:www\.)?(?:github|gitlab)\.com/([A-Za-z0-9][\w.-]*)/?$")


def _introduced(text: str, subject: str) -> tuple[str, tuple[str, bool]] | None:
    """(subject, relation) of a paragraph whose last sentence introduces a list: "Billing depends on:",
    "The owners of Ledger are:" — the relation a phrase of the vocabulary names, the subject the name before it
    (else the section's)."""
    if not text.rstrip().endswith(":"):
        return None
    sentence = re.split(r"(?<=[.!?])\s+", text.rstrip(": "))[-1]
    low = sentence.lower()
    for phrase in sorted({**vocab.FIELD_RELATIONS, **vocab.HEADING_ORDER}, key=len, reverse=True):
        at = re.search(rf"\b{re.escape(phrase)}\b", low)
        if at:
            label, reverse = vocab.HEADING_RELATIONS.get(phrase, (vocab.FIELD_RELATIONS.get(phrase, ""), False))
            named = [m.group(1) for m in _INTRO_SUBJECT.finditer(sentence) if m.start() != 0 or " " in m.group(1)]
            own = canonical_name(named[0]).label if named else ""
            return (own if own and own.lower() not in ("i", "we", "our", "the") else subject), (label, reverse)
    return None


def _profile_handles(block: Block) -> list[str]:
    """"[Ana Ruiz](https://github.com/aruiz)": the person's handle is @aruiz."""
    return [f"@{m.group(1)}" for _, target in block.links[:1] if (m := _PROFILE.match(target))]


def _listing(block: Block) -> tuple[str, bool] | None:
    """The relation the list an item is in names, by its parent item or its heading ("## Dependencies")."""
    return next((r for r in (_listing_relation(t) for t in (*block.outline[-1:], *block.headings[-1:])) if r), None)


def _listing_relation(text: str) -> tuple[str, bool] | None:
    key = re.sub(r"^[\d.)\s]+", "", _key(text)).strip()
    return vocab.HEADING_RELATIONS.get(key)


def _lead_name(block: Block) -> str:
    """The name a list item leads with: its code span or link text if it opens with one, else the words
    before a colon, dash or bracket ("Ledger — invoices", "[Tax](…)", "`billing-db`: the database")."""
    if block.codes and block.text.startswith(block.codes[0]):
        return canonical_name(block.codes[0]).label
    if block.links and block.text.startswith(block.links[0][0]):
        return canonical_name(block.links[0][0]).label
    lead = _ITEM_LEAD.match(block.text)
    name = canonical_name(lead["name"]).label if lead else ""
    return name if name and len(name.split()) <= 4 else ""


def _person_like(name: str) -> bool:
    words = name.split()
    return 2 <= len(words) <= 4 and all(w[:1].isupper() for w in words) and not canonical_name(name).kind


def _node_name(node: mermaid.Node) -> str:
    """A diagram node's entity: its label, or the name in brackets when the label is only a kind of thing
    ("Database (PostgreSQL)" is PostgreSQL)."""
    name = canonical_name(node.name).label
    if node.alias and (name.lower() in KIND_WORDS or not name):
        name = canonical_name(node.alias).label
    return name if name and len(name.split()) <= _MAX_NAME_WORDS else ""


def _datastore(node: mermaid.Node) -> bool:
    return KIND_WORDS.get(node.name.lower(), ("", False))[0] == "datastore"



def _slug_like(name: str) -> bool:
    """"service_table", "docs/cart", "service-table": a page's URL alias, not a name (names have capitals or
    spaces; a lower-case word joined by hyphens is a slug)."""
    return bool(re.search(r"[_/]", name)) or ("-" in name and name == name.lower() and " " not in name)
