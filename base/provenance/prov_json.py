"""An explain trace (our wire `Triple`s) as a W3C PROV-JSON document, for PROV tools such as the `prov`
package (`ProvDocument.deserialize(content=..., format="json")`). Pure: builds a dict, imports no PROV library.

How RDF maps to PROV-JSON:

- **Identifiers** are qualified names with a declared prefix, because PROV-JSON has no other kind and `prov`
  warns (and from 3.3 refuses) when a key only resolves by compacting a full IRI. Prefix + local part is
  always exactly the original IRI, so every id expands back to the IRI it came from. Fixed prefixes:
  `tg`, `prov`, `rdf`, `rdfs`, `dc`, `xsd`, `schema`, `skos`, plus `tgq` = `urn:trustgraph:` (query-time ids:
  `urn:trustgraph:question:abc` → `tgq:question:abc`) and `tgi` = `https://trustgraph.ai/` (minted ids:
  `tgi:activity/<uuid>`, `tgi:agent/<name>`, `tgi:e/<slug>`); the longest matching namespace wins, so
  `https://trustgraph.ai/ns/query` is `tg:query`. Any other IRI used as an id, a predicate or a datatype gets a
  prefix minted from its namespace's last segment (`urn:chunk:<uuid>` → `chunk:<uuid>`), named in sorted order.
  A blank node `_:x` is skolemised to `bnode:x` (`urn:tracegraph:bnode:`), since `prov` reads `_:` as anonymous.
- **Records**: a subject typed prov:Activity is an `activity`, else prov:Agent an `agent`, else an `entity`;
  an untyped subject of prov:used / wasAssociatedWith / startedAtTime / endedAtTime is an `activity` (the
  PROV-O domain). Its other rdf:types (tg:Question, tg:EdgeSelection...) become `prov:type` values.
- **Relations**: prov:wasDerivedFrom, wasGeneratedBy, used and wasAssociatedWith become `wasDerivedFrom`,
  `wasGeneratedBy`, `used`, `wasAssociatedWith` records with blank ids (`_:wDF1`, ...), numbered in sorted order.
  A single well-formed prov:startedAtTime / endedAtTime of an activity becomes its `prov:startTime` / `prov:endTime`;
  any other (several, or not an xsd:dateTime `prov` can parse) stays an attribute under its own name.
- **Attributes**: every other property, keyed by its qualified name. An IRI value is `{"$": qname, "type":
  "xsd:QName"}` (the PROV-JSON submission's type, which `prov` 3 reads as a QualifiedName) when it compacts
  against the document's prefixes, else `{"$": iri, "type": "xsd:anyURI"}`; a plain or xsd:string literal is a
  JSON string; a language-tagged one `{"$", "lang"}`; another typed one `{"$", "type"}`. Several values make a list.
- **Quoted triples** (`tg:edge`, `tg:contains`) have no PROV form of their own: each becomes an `entity` of
  prov:type rdf:Statement whose `rdf:subject`, `rdf:predicate` and `rdf:object` attributes hold its terms (as
  SHACL sees them, base/provenance/shacl.py), so a PROV tool reads the edge without parsing text. Its id,
  `triple:<hash>` (`urn:tracegraph:triple:`), is a digest of the triple, so the same edge quoted twice is one record.
- Named graphs are dropped (the same statement in two graphs is written once), and values are sorted and
  deduplicated, so the same triples in any order give the same document.

A literal or quoted-triple subject, and a predicate that PROV-DM reserves as a relation's formal attribute
(prov:entity, prov:activity...), have no PROV-JSON form and raise ValueError rather than being dropped.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from tracegraph.base.provenance.uris import TRUSTGRAPH_BASE
from tracegraph.base.provenance.vocab import DC, PROV, RDF, RDFS, SCHEMA, SKOS, TG, XSD, Vocabulary
from tracegraph.schemas.rdf import BlankTerm, IriTerm, LiteralTerm, Term, Triple, TripleTerm

TRUSTGRAPH_URN = "urn:trustgraph:"
BLANK_NODE_BASE = "urn:tracegraph:bnode:"
QUOTED_TRIPLE_BASE = "urn:tracegraph:triple:"
REIFICATION = Vocabulary(RDF.base, "Statement subject predicate object")
"""What a quoted triple's record is made of (`vocab.RDF` holds only rdf:type)."""

PREFIXES: Mapping[str, str] = {
    "dc": DC.base, "prov": PROV.base, "rdf": RDF.base, "rdfs": RDFS.base, "schema": SCHEMA.base,
    "skos": SKOS.base, "tg": TG.base, "tgi": TRUSTGRAPH_BASE + "/", "tgq": TRUSTGRAPH_URN, "xsd": XSD.base,
}
"""Declared in every document; minted prefixes are added beside them."""

_KINDS = {PROV.Activity.iri: "activity", PROV.Agent.iri: "agent", PROV.Entity.iri: "entity"}
_KIND_ORDER = ("activity", "agent", "entity")

# predicate -> (record, subject's role, object's role, blank-id stem)
_RELATIONS = {
    PROV.wasDerivedFrom.iri: ("wasDerivedFrom", "prov:generatedEntity", "prov:usedEntity", "wDF"),
    PROV.wasGeneratedBy.iri: ("wasGeneratedBy", "prov:entity", "prov:activity", "wGB"),
    PROV.used.iri: ("used", "prov:activity", "prov:entity", "u"),
    PROV.wasAssociatedWith.iri: ("wasAssociatedWith", "prov:activity", "prov:agent", "wAW"),
}
_TIMES = {PROV.startedAtTime.iri: "prov:startTime", PROV.endedAtTime.iri: "prov:endTime"}
_ACTIVITY_DOMAIN = frozenset({PROV.used.iri, PROV.wasAssociatedWith.iri, *_TIMES})

# PROV-DM's formal attributes: PROV-JSON readers take these keys as relation roles, never as plain attributes.
_FORMAL = frozenset(PROV.base + name for name in """
    activity agent alternate1 alternate2 bundle collection delegate endTime ender entity generalEntity
    generatedEntity generation influencee influencer informant informed plan responsible specificEntity
    startTime starter time trigger usage usedEntity""".split())

# The xsd:dateTime forms PROV readers parse (no negative or 5-digit years).
_DATETIME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})?")

Node = IriTerm | BlankTerm


def to_prov_json(triples: Iterable[Triple]) -> dict[str, Any]:
    """The PROV-JSON document for an explain trace; `json.dumps` it as is. See the module docstring."""
    types: dict[Node, set[str]] = defaultdict(set)
    props: dict[Node, dict[str, set[Term]]] = defaultdict(lambda: defaultdict(set))
    relations: set[tuple[str, Node, Node]] = set()
    linked: dict[Node, set[str]] = defaultdict(set)  # the relation predicates each subject has
    for t in _with_statements(triples):
        s, p, o = t.s, t.p.iri, t.o
        if not isinstance(s, IriTerm | BlankTerm):
            raise ValueError(f"PROV-JSON has no record for the subject {s} in {t}")
        if p in _FORMAL:
            raise ValueError(f"<{p}> is a formal attribute of PROV-DM relations, not a property: {t}")
        types.setdefault(s, set())  # every subject becomes a record, even one with only relations
        if p == RDF.type.iri and isinstance(o, IriTerm):
            types[s].add(o.iri)
        elif p in _RELATIONS and isinstance(o, IriTerm | BlankTerm):
            relations.add((p, s, o))
            linked[s].add(p)
        else:
            props[s][p].add(o)

    kinds = {node: _kind(types[node], props[node].keys() | linked[node]) for node in types}
    times = {node: _times(props[node]) if kinds[node] == "activity" else {} for node in types}

    needed = {_node_iri(n) for n in types} | {_node_iri(o) for _, _, o in relations}
    for node, by_predicate in props.items():
        for predicate, values in by_predicate.items():
            needed.add(predicate)
            needed.update(v.datatype for v in values if isinstance(v, LiteralTerm) and _typed(v))
    names = _Names(needed)

    records: dict[str, dict[str, Any]] = {kind: {} for kind in _KIND_ORDER}
    for node in types:
        attributes: dict[str, list[Any]] = defaultdict(list)
        for rdf_type in types[node] - {k for k, kind in _KINDS.items() if kind == kinds[node]}:
            attributes["prov:type"].append(_iri_value(rdf_type, names))
        for predicate, values in props[node].items():  # a prov:type predicate joins the rdf:types
            attributes[names.qname(predicate)] += [_value(v, names) for v in values]
        record = times[node] | {key: _one_or_many(found) for key, found in attributes.items()}
        records[kinds[node]][names.qname(_node_iri(node))] = dict(sorted(record.items()))

    document: dict[str, Any] = {"prefix": dict(sorted(names.prefixes.items()))}
    document.update({kind: dict(sorted(found.items())) for kind, found in records.items() if found})
    for predicate, (relation, subject_role, object_role, stem) in sorted(_RELATIONS.items(), key=lambda r: r[1]):
        pairs = sorted((names.qname(_node_iri(s)), names.qname(_node_iri(o)))
                       for p, s, o in relations if p == predicate)
        if pairs:
            document[relation] = {f"_:{stem}{n}": {subject_role: s, object_role: o}
                                for n, (s, o) in enumerate(pairs, start=1)}
    return document


def _with_statements(triples: Iterable[Triple]) -> Iterator[Triple]:
    """The triples with each quoted triple in object position replaced by its statement's id, followed by
    the statement's own triples (nested quoted triples alike)."""
    for t in triples:
        if not isinstance(t.o, TripleTerm):
            yield t
            continue
        statement = quoted_triple_iri(t.o)
        yield Triple(s=t.s, p=t.p, o=statement)
        yield Triple(s=statement, p=RDF.type, o=REIFICATION.Statement)
        quoted = t.o.triple
        yield from _with_statements(Triple(s=statement, p=role, o=part) for role, part in (
            (REIFICATION.subject, quoted.s), (REIFICATION.predicate, quoted.p), (REIFICATION.object, quoted.o)))


def quoted_triple_iri(term: TripleTerm) -> IriTerm:
    """The id of a quoted triple's record: a digest of its N-Triples form, so equal triples share one record."""
    return IriTerm(iri=QUOTED_TRIPLE_BASE + hashlib.sha1(str(term).encode()).hexdigest()[:16])


def _kind(rdf_types: set[str], predicates: set[str]) -> str:
    found = {_KINDS[t] for t in rdf_types if t in _KINDS}
    if not found and predicates & _ACTIVITY_DOMAIN:
        return "activity"
    return next((kind for kind in _KIND_ORDER if kind in found), "entity")


def _times(by_predicate: dict[str, set[Term]]) -> dict[str, str]:
    """Moves a lone, parseable start/end time out of the properties into the activity's formal slot."""
    out = {}
    for predicate, key in _TIMES.items():
        values = by_predicate.get(predicate, set())
        if len(values) == 1 and _is_datetime(value := next(iter(values))):
            out[key] = value.value
            del by_predicate[predicate]
    return out


def _is_datetime(term: Term) -> bool:
    if not isinstance(term, LiteralTerm) or term.language or not _DATETIME.fullmatch(term.value):
        return False
    if term.datatype not in (None, XSD.string.iri, XSD.dateTime.iri):
        return False
    try:
        datetime.datetime.fromisoformat(term.value)
    except ValueError:
        return False
    return True


def _typed(literal: LiteralTerm) -> bool:
    return bool(literal.datatype) and not literal.language and literal.datatype != XSD.string.iri


def _node_iri(node: Node) -> str:
    return node.iri if isinstance(node, IriTerm) else BLANK_NODE_BASE + node.id


def _value(term: Term, names: "_Names") -> Any:
    if isinstance(term, IriTerm | BlankTerm):
        return _iri_value(_node_iri(term), names)
    if term.language:
        return {"$": term.value, "lang": term.language}
    if _typed(term):
        return {"$": term.value, "type": names.qname(term.datatype)}
    return term.value


def _iri_value(iri: str, names: "_Names") -> dict[str, str]:
    qname = names.compact(iri)
    return {"$": qname, "type": "xsd:QName"} if qname else {"$": iri, "type": "xsd:anyURI"}


def _one_or_many(values: list[Any]) -> Any:
    unique = {json.dumps(v, sort_keys=True): v for v in values}
    ordered = [unique[key] for key in sorted(unique)]
    return ordered[0] if len(ordered) == 1 else ordered


class _Names:
    """The document's prefixes: the fixed ones, plus one minted per namespace that `needed` IRIs lack."""

    def __init__(self, needed: Iterable[str]) -> None:
        self.prefixes = dict(PREFIXES)
        self._by_length = self._sorted()
        missing = sorted({_split(iri) for iri in needed if self.compact(iri) is None})
        for namespace in missing:
            if namespace == BLANK_NODE_BASE:
                base = "bnode"
            else:
                segment = re.split(r"[/#:]", namespace.rstrip("/#:"))[-1]
                base = re.sub(r"[^A-Za-z0-9_-]", "_", segment)
                base = base if base[:1].isalpha() else f"ns{base}"
            prefix, n = base, 0
            while prefix in self.prefixes or prefix == "default":
                n += 1
                prefix = f"{base}_{n}"
            self.prefixes[prefix] = namespace
        self._by_length = self._sorted()

    def _sorted(self) -> list[tuple[str, str]]:
        return sorted(self.prefixes.items(), key=lambda item: (-len(item[1]), item[0]))

    def compact(self, iri: str) -> str | None:
        """`prefix:local` for the longest declared namespace that leaves a non-empty local part."""
        for prefix, namespace in self._by_length:
            if iri.startswith(namespace) and len(iri) > len(namespace):
                return f"{prefix}:{iri[len(namespace):]}"
        return None

    def qname(self, iri: str) -> str:
        qname = self.compact(iri)
        if qname is None:  # only an IRI with no '/', '#' or ':' before its last character
            raise ValueError(f"<{iri}> cannot be written as a PROV qualified name")
        return qname


def _split(iri: str) -> str:
    """The namespace to mint a prefix for: up to the last '/', '#' or ':' that leaves a local part."""
    cut = max(iri.rfind(sep, 0, len(iri) - 1) for sep in "/#:")
    return iri[:cut + 1] if cut >= 0 else iri
