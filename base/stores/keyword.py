"""The keyword index: BM25 over a collection's facts, each indexed as the sentence its labels make.

One tantivy index per collection under root/<user>/<collection>/ (CollectionRef names are safe
folder names), so collections never share terms or statistics. Labels live in the same index as
documents of their own, so a fact written later reads a label written earlier.

What counts as a fact is `is_knowledge` (base/provenance/vocab.py), and nothing else: a document's
description (dc:title, tg:mimeType, rdf:type tg:Document …), provenance and labels are never indexed.
An index written under an older, looser rule is cleaned as it goes: a search never returns a stored
entry the rule now refuses, and relabelling deletes such entries instead of writing them again.
"""

from __future__ import annotations

import hashlib
import re
from urllib.parse import unquote
from collections.abc import Iterable, Iterator
from functools import cache
from pathlib import Path
from typing import NamedTuple

import tantivy

from tracegraph.base.provenance.vocab import RDFS, READABLE_PREDICATES, is_knowledge
from tracegraph.base.stores.protocol import CollectionRef
from tracegraph.base.stores.shelf import IndexShelf, OpenIndex
from tracegraph.base.stores.terms import nt, to_ox
from tracegraph.schemas.rdf import IriTerm, LiteralTerm, Term, Triple, TripleTerm

ANALYZER = "fact"  # the name our analyzer is registered under in every index
MAX_QUERY_TERMS = 64  # a pasted essay still makes a bounded query
LABEL_KEY = "label:"  # label documents are keyed "label:<iri>"; fact keys are hex digests


class KeywordHit(NamedTuple):
    triple: Triple
    text: str
    score: float


is_fact = is_knowledge  # the one rule; the name says what it means here


def readable(iri: str) -> str:
    """A name for an IRI nobody labelled: its last segment, with '-', '_' and camelCase read as spaces.

    >>> readable("https://trustgraph.ai/e/helios-grid"), readable("http://x.org/ns#worksFor")
    ('helios grid', 'works for')
    """
    segment = unquote(re.split(r"[/#:]", iri.rstrip("/#:"))[-1] or iri)
    segment = re.sub(r"(?<=[a-z0-9])([A-Z])(?=[a-z])", lambda m: " " + m.group(1).lower(), segment)
    return re.sub(r"[-_\s]+", " ", segment).strip() or iri


def fact_key(t: Triple) -> str:
    """Stable across messages and engines: the digest of the fact's canonical N-Triples form."""
    text = " ".join(nt(to_ox(term)) for term in (t.s, t.p, t.o))
    return hashlib.sha1(text.encode()).hexdigest()


def iris_of(t: Triple) -> Iterator[str]:
    """Every IRI a fact names, quoted triples included."""
    for term in (t.s, t.p, t.o):
        if isinstance(term, IriTerm):
            yield term.iri
        elif isinstance(term, TripleTerm):
            yield from iris_of(term.triple)


def sentence(t: Triple, labels: dict[str, str]) -> str:
    """The words a fact says, e.g. "Helios Grid depends on Corvid Analytics"."""
    predicate = labels.get(t.p.iri) or READABLE_PREDICATES.get(t.p.iri) or readable(t.p.iri)
    words = (_words(t.s, labels), predicate, _words(t.o, labels))
    return " ".join(w for w in words if w)


def _words(term: Term, labels: dict[str, str]) -> str:
    if isinstance(term, IriTerm):
        return labels.get(term.iri) or readable(term.iri)
    if isinstance(term, LiteralTerm):
        return term.value
    if isinstance(term, TripleTerm):
        return sentence(term.triple, labels)
    return ""  # a blank node's id means nothing to a reader


def label_of(t: Triple) -> tuple[str, str] | None:
    """(iri, label) when `t` is an rdfs:label of an IRI."""
    if t.p == RDFS.label and isinstance(t.s, IriTerm) and isinstance(t.o, LiteralTerm):
        return t.s.iri, t.o.value
    return None


def _analyzer() -> tantivy.TextAnalyzer:
    """Words of letters and digits, lower-cased, ASCII-folded, English stop words dropped, stemmed:
    used for both the indexed sentences and the query, so their terms always agree. A fresh one
    per use (a few µs): an analyzer keeps state while it tokenizes, so threads do not share one."""
    return (tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
            .filter(tantivy.Filter.remove_long(40))
            .filter(tantivy.Filter.lowercase())
            .filter(tantivy.Filter.ascii_fold())
            .filter(tantivy.Filter.stopword("english"))
            .filter(tantivy.Filter.stemmer("english"))
            .build())


@cache
def _schema() -> tantivy.Schema:
    builder = tantivy.SchemaBuilder()
    builder.add_text_field("key", stored=True, tokenizer_name="raw")
    builder.add_text_field("node", tokenizer_name="raw")  # the IRIs a fact names, to re-label it
    builder.add_text_field("text", stored=True, tokenizer_name=ANALYZER)
    builder.add_bytes_field("triple", stored=True)  # the fact as wire JSON
    builder.add_bytes_field("label", stored=True)
    return builder.build()


def query_terms(text: str) -> list[str]:
    """The distinct index terms of user text; no syntax, so no text can make the query fail."""
    return list(dict.fromkeys(_analyzer().analyze(text)))[:MAX_QUERY_TERMS]


class _OpenIndex(OpenIndex):
    """One collection's fact index: facts and the labels their sentences are made of."""

    def __init__(self, path: Path, writer_heap: int) -> None:
        super().__init__(path, _schema(), {ANALYZER: _analyzer()}, writer_heap)

    def apply(self, added: list[Triple], removed: list[Triple]) -> None:
        self.commit(lambda writer: self._write(writer, added, removed))

    def _write(self, writer: tantivy.IndexWriter, added: list[Triple], removed: list[Triple]) -> None:
        searcher = self.index.searcher()  # the last commit: what is stored before this write
        # Every removal is deleted, fact or not: an entry an older rule let in can still be taken out.
        gone = {fact_key(t): t for t in removed}
        facts = {fact_key(t): t.model_copy(update={"g": None}) for t in added if is_fact(t)}
        labels, changed = self._relabel(writer, searcher, added, removed,
                                        {iri for t in facts.values() for iri in iris_of(t)})
        for key, fact in self._mentioning(searcher, changed):  # their sentences name a changed label
            if not is_fact(fact):  # stored under an older rule: drop it rather than write it again
                gone.setdefault(key, fact)
            elif key not in gone:
                facts.setdefault(key, fact)
        labels |= self._labels(searcher, {iri for t in facts.values() for iri in iris_of(t)} - labels.keys() - changed)
        for key in gone.keys() - facts.keys():
            writer.delete_documents_by_term("key", key)
        for key, fact in facts.items():  # delete first: writing a fact twice leaves one document
            writer.delete_documents_by_term("key", key)
            writer.add_document(tantivy.Document(
                key=key, node=list(dict.fromkeys(iris_of(fact))), text=sentence(fact, labels),
                triple=fact.model_dump_json(by_alias=True, exclude_none=True).encode()))

    def _relabel(self, writer: tantivy.IndexWriter, searcher: tantivy.Searcher, added: list[Triple],
                 removed: list[Triple], mentioned: set[str]) -> tuple[dict[str, str], set[str]]:
        """Store the labels `added` gives and drop those `removed` takes away; returns the labels
        known for these IRIs and `mentioned` ones, and the IRIs whose label changed."""
        unlabelled = [pair for pair in map(label_of, removed) if pair]
        new_labels = dict(pair for pair in map(label_of, added) if pair)
        labels = self._labels(searcher, {iri for iri, _ in unlabelled} | set(new_labels) | mentioned)
        changed = {iri for iri, value in unlabelled if labels.get(iri) == value and iri not in new_labels}
        changed |= {iri for iri, value in new_labels.items() if labels.get(iri) != value}
        for iri in changed:
            labels.pop(iri, None)
            writer.delete_documents_by_term("key", LABEL_KEY + iri)
            if iri in new_labels:
                labels[iri] = new_labels[iri]
                writer.add_document(tantivy.Document(key=LABEL_KEY + iri, label=new_labels[iri].encode()))
        return labels, changed

    @staticmethod
    def _labels(searcher: tantivy.Searcher, iris: set[str]) -> dict[str, str]:
        """The stored labels of these IRIs (those that have one)."""
        if not iris:
            return {}
        query = tantivy.Query.term_set_query(_schema(), "key", [LABEL_KEY + iri for iri in iris])
        found = {}
        for _, address in searcher.search(query, len(iris), count=False).hits:
            doc = searcher.doc(address)
            found[doc.get_first("key").removeprefix(LABEL_KEY)] = doc.get_first("label").decode()
        return found

    @staticmethod
    def _mentioning(searcher: tantivy.Searcher, iris: set[str]) -> Iterator[tuple[str, Triple]]:
        """(key, fact) of every indexed fact that names one of these IRIs."""
        if not iris or not searcher.num_docs:
            return
        query = tantivy.Query.term_set_query(_schema(), "node", sorted(iris))
        for _, address in searcher.search(query, searcher.num_docs, count=False).hits:
            doc = searcher.doc(address)
            yield doc.get_first("key"), Triple.model_validate_json(doc.get_first("triple"))

    def search(self, terms: list[str], limit: int) -> list[KeywordHit]:
        """The best `limit` facts, read a page at a time past any entry `is_fact` now refuses."""
        query = self.any_term("text", terms)
        searcher = self.index.searcher()
        hits: list[KeywordHit] = []
        offset = 0
        while len(hits) < limit:
            page = searcher.search(query, limit, count=False, offset=offset).hits
            for score, address in page:
                doc = searcher.doc(address)
                fact = Triple.model_validate_json(doc.get_first("triple"))
                if is_fact(fact) and len(hits) < limit:
                    hits.append(KeywordHit(fact, doc.get_first("text"), score))
            if len(page) < limit:
                break
            offset += limit
        return hits


class KeywordIndex(IndexShelf[_OpenIndex]):
    """BM25 search over each collection's facts; `apply` keeps it in step with the graph.

    Keeps at most `max_open` indexes open (least recently used closed first), since every open
    writer holds a heap. Writes to one collection run one at a time; searches never wait for them
    once the collection is open.
    """

    def _open_entry(self, path: Path) -> _OpenIndex:
        return _OpenIndex(path, self.writer_heap)

    async def apply(self, ref: CollectionRef, added: Iterable[Triple] = (), removed: Iterable[Triple] = ()) -> None:
        """Index `added`, forget `removed` (removals first), and commit: a search right after sees it."""
        added, removed = list(added), list(removed)
        if not added and not removed:
            return
        await self.write(ref, lambda entry: entry.apply(added, removed))

    def terms(self, text: str) -> list[str]:
        return query_terms(text)
