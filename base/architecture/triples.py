"""CODEOWNERS rules, memory records and code paths as triples (the model is in this package's docstring):
the facts, grouped by the line they were read from, and the provenance that ties each group to its
line and document, so a trace resolves to "CODEOWNERS, line 4" and removing the document removes them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from tracegraph.base.architecture.code_paths import CodePath
from tracegraph.base.architecture.codeowners import CodeOwners, Owner, Problem
from tracegraph.base.architecture.memory_docs import MemoryRecord
from tracegraph.base.provenance.extraction import (
    Component, failed_extraction_triples, source_line_triples, subgraph_triples,
)
from tracegraph.base.provenance.uris import (
    codeowners_rule_uri, entity_uri, memory_uri, source_line_uri, subgraph_uri,
)
from tracegraph.base.provenance.vocab import DC, PROV, RDF, RDFS, TG, XSD
from tracegraph.schemas.rdf import IriTerm, Triple, iri, literal

COMPONENT = Component("architecture-extract", "1.0")
MEMORY_CLASSES = {"decision": TG.Decision, "failure-pattern": TG.FailurePattern,
                  "exception": TG.PolicyException, "memory": TG.Memory}
KIND_OF_CLASS = {cls.iri: kind for kind, cls in MEMORY_CLASSES.items()}
RELATIONS = {"why": TG.why, "affected": TG.affected, "caused-by": TG.causedBy, "excepts": TG.excepts,
             "concerns": TG.concerns}
RELATION_OF_PREDICATE = {p.iri: name for name, p in RELATIONS.items()}
FIELDS = {"rationale": TG.rationale, "consequence": TG.consequence, "root-cause": TG.rootCause,
          "options": TG.consideredOption, "drivers": TG.decisionDriver, "chosen": TG.chosenOption,
          "impact": TG.impact, "action-items": TG.actionItem, "policy": TG.policy}
LISTS = ("options", "drivers", "action-items")  # fields holding one item per line: one value per item

ByLine = dict[int, list[Triple]]


def _fact(s: str, p: IriTerm, o) -> Triple:
    return Triple(s=iri(s), p=p, o=o)


def _placed(node: str, document: str, line: int) -> list[Triple]:
    """Which document and line a rule or memory node was read from, on the node itself: every answer
    cites them, so they are read with the node instead of through the provenance chain."""
    return [_fact(node, PROV.wasDerivedFrom, iri(document)),
            _fact(node, TG.lineNumber, literal(line, datatype=XSD.integer.iri))]


def owner_triples(owner: Owner) -> list[Triple]:
    """The owner a handle names, as an entity with its handle (so a graph entity of the same name, the
    "Grid Analytics" team for @corvid/grid-analytics, is the same node)."""
    entity = entity_uri(owner.name)
    return [_fact(entity, RDF.type, TG.Team if owner.kind == "team" else TG.Person),
            _fact(entity, TG.contactHandle, literal(owner.handle))]


def codeowners_facts(document: str, parsed: CodeOwners) -> ByLine:
    """One rule node per line: its pattern, line and owners."""
    lines: ByLine = {}
    for rule in parsed.rules:
        node = codeowners_rule_uri(document, rule.line)
        facts = [_fact(node, RDF.type, TG.CodeOwnersRule),
                 _fact(node, RDFS.label, literal(f"CODEOWNERS rule {rule.pattern} (line {rule.line})")),
                 _fact(node, TG.pathPattern, literal(rule.pattern)),
                 *_placed(node, document, rule.line)]
        for owner in rule.owners:
            facts += [_fact(node, TG.codeOwner, iri(entity_uri(owner.name))),
                      _fact(node, TG.contactHandle, literal(owner.handle)), *owner_triples(owner)]
        lines[rule.line] = facts
    return lines


def memory_facts(document: str, records: Sequence[MemoryRecord]) -> ByLine:
    """One typed node per record, with its text, author, date, fields and relations to the entities it
    names (each entity labelled, so it exists in the collection even if no other fact names it). A field
    read from lines of its own (a decision's context, each option) is grouped on the first of them, so
    its provenance names its lines (memory_spans gives the last)."""
    lines: ByLine = {}
    for record in records:
        node = memory_uri(document, record.kind, record.line, record.title)
        facts = [_fact(node, RDF.type, MEMORY_CLASSES[record.kind]),
                 _fact(node, RDFS.label, literal(record.title)), *_placed(node, document, record.line)]
        facts += [_fact(node, predicate, literal(value)) for predicate, value in (
            (TG.summary, record.text), (DC.creator, record.author), (DC.date, record.date),
            (TG.decisionStatus, record.status)) if value]
        for relation, names in record.relations.items():
            for name in dict.fromkeys(names):
                entity = entity_uri(name)
                facts += [_fact(node, RELATIONS[relation], iri(entity)), _fact(entity, RDFS.label, literal(name))]
        lines.setdefault(record.line, []).extend(facts)
        for name, value in record.fields.items():
            items = [item for item in (value.split("\n") if name in LISTS else [value]) if item]
            for index, item in enumerate(items if name in FIELDS else []):
                lines.setdefault(_first_line(record, name, index), []).append(_fact(node, FIELDS[name], literal(item)))
    return lines


def _first_line(record: MemoryRecord, name: str, index: int) -> int:
    """Where the `index`th value of a field was read from, else the record's own line."""
    spans = record.lines.get(name, ())
    return spans[index][0] if index < len(spans) else record.line


def memory_spans(records: Sequence[MemoryRecord]) -> dict[int, int]:
    """For the line groups memory_facts makes from records that know their lines: first line → last line."""
    spans: dict[int, int] = {}
    for record in records:
        for found in record.lines.values():
            for first, last in found:
                spans[first] = max(spans.get(first, first), last)
    return spans


def code_path_facts(paths: Iterable[CodePath]) -> ByLine:
    lines: ByLine = {}
    for found in paths:
        entity = entity_uri(found.name)
        lines.setdefault(found.line, []).extend([_fact(entity, TG.codePath, literal(found.path)),
                                                 _fact(entity, RDFS.label, literal(found.name))])
    return lines


def with_provenance(document: str, lines: Mapping[int, Sequence[Triple]], *, timestamp: str, extractor: str,
                    model: str | None = None, spans: Mapping[int, int] | None = None) -> list[Triple]:
    """The facts, and for each line its tg:SourceLine (derived from the document) and the subgraph
    (derived from the line) that contains them; a line in `spans` (first → last line, as memory_spans
    gives) puts those lines on the subgraph (tg:firstLine, tg:lastLine)."""
    out: list[Triple] = []
    for number, facts in sorted(lines.items()):
        unique = list(dict.fromkeys(facts))
        line = source_line_uri(document, number)
        out += unique
        out += source_line_triples(line, document, number=number, component=COMPONENT, timestamp=timestamp)
        out += subgraph_triples(subgraph_uri(line, extractor), line, unique, component=COMPONENT,
                                timestamp=timestamp, extractor=extractor, llm_model=model,
                                lines=(number, spans[number]) if spans and number in spans else None)
    return out


def problem_triples(document: str, problems: Iterable[Problem], *, timestamp: str) -> list[Triple]:
    """A line that could not be read is recorded as a failed extraction of that line, never dropped in silence."""
    out: list[Triple] = []
    for problem in problems:
        line = source_line_uri(document, problem.line)
        out += source_line_triples(line, document, number=problem.line, component=COMPONENT, timestamp=timestamp)
        out += failed_extraction_triples(subgraph_uri(line, "offline:failed"), line, component=COMPONENT,
                                         timestamp=timestamp, extractor="offline",
                                         error=f"line {problem.line}: {problem.reason}")
    return out
