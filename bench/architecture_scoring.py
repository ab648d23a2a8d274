"""Scoring the stored graph of one collection against the architecture gold (bench/architecture_public.py):
dependencies, ownership (with the emeritus trap), decisions, incidents and dated changes.

A GraphView holds what the benchmark read through SPARQL (the default graph, the history records, the
documents' paths); every scorer is a pure function of a view and gold items, and returns its figures
plus the false positives and false negatives as lines a person can read."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from architecture_gold import (
    any_match, chain_links, gold_patterns, iso_dates, overlap, pattern_key, status_word,
)
from tracegraph.base.provenance.vocab import DC, PROV, RDF, RDFS, TG

REL = "https://trustgraph.ai/r/"
DEPENDENCY = {"depends-on", "calls", "uses", "reads-from", "writes-to", "publishes-to", "consumes-from", "runs-on"}
OWNERSHIP = {"is-owned-by", "is-maintained-by", "is-led-by", "is-operated-by", "has-on-call"}
REPLACED_BY = {"is-replaced-by", "replaced-by", "is-superseded-by"}  # old → new
REPLACES = {"replaces", "supersedes"}  # new → old
# A predicate with one of these stems states a change, either way round ("X replaced-with Y", "Y moved-from X").
CHANGE_STEMS = ("replac", "supersed", "migrat", "move", "switch", "rewr", "renam", "successor", "upgrad", "chang",
                "becom", "deprecat")
WHY_THRESHOLD = 0.3


def term_text(term: dict[str, Any] | None) -> str:
    """A wire term as text: IRI, literal value, blank id; a quoted triple as '<<s p o>>'."""
    if not term:
        return ""
    if term.get("t") == "t":
        tr = term["tr"]
        return f"<<{term_text(tr['s'])} {term_text(tr['p'])} {term_text(tr['o'])}>>"
    return term.get("i") or term.get("v") or term.get("d") or ""


@dataclass
class Record:
    """One history record: a document's statement of (s, p, o) from `valid_from`."""

    uri: str
    s: str
    p: str
    o: str
    valid_from: str
    superseded_by: str | None
    document: str | None


class GraphView:
    """A collection's default graph (s → p → [o]), its history records and its documents' paths."""

    def __init__(self, rows: list[dict[str, Any]], records: list[dict[str, Any]]) -> None:
        self.out: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
        self.facts: list[tuple[str, str, str]] = []
        self.iris: set[str] = set()
        for row in rows:
            s, p, o = term_text(row["s"]), term_text(row["p"]), term_text(row["o"])
            self.out[s][p].append(o)
            if p.startswith(REL):
                self.facts.append((s, p, o))
            if row["o"].get("t") == "i":
                self.iris.add(o)
        self.paths = {d: (self.first(d, DC.title.iri) or d) for d in self.instances(TG.Document.iri)}
        self.records = [Record(term_text(r["r"]), term_text(r["t"]["tr"]["s"]), term_text(r["t"]["tr"]["p"]),
                               term_text(r["t"]["tr"]["o"]), term_text(r.get("from"))[:10],
                               term_text(r.get("by")) or None, term_text(r.get("doc")) or None)
                        for r in records if r.get("t", {}).get("t") == "t"]

    def first(self, node: str, predicate: str) -> str | None:
        values = self.out.get(node, {}).get(predicate)
        return values[0] if values else None

    def instances(self, cls: str) -> list[str]:
        return [s for s, ps in self.out.items() if cls in ps.get(RDF.type.iri, [])]

    def names(self, node: str) -> list[str]:
        """Labels, else the IRI's slug, else the literal itself."""
        labels = self.out.get(node, {}).get(RDFS.label.iri)
        if labels:
            return labels
        return [node.rsplit("/", 1)[-1].replace("-", " ")] if node.startswith("https://trustgraph.ai/e/") else [node]

    def owner_names(self, node: str) -> list[str]:
        return self.names(node) + self.out.get(node, {}).get(TG.contactHandle.iri, [])

    def label(self, node: str) -> str:
        return self.names(node)[0]

    def document_path(self, node: str) -> str | None:
        docs = [d for d in self.out.get(node, {}).get(PROV.wasDerivedFrom.iri, []) if d in self.paths]
        return self.paths[docs[0]] if docs else None


def _slug(predicate: str) -> str:
    return predicate[len(REL):] if predicate.startswith(REL) else ""


def _ratio(n: int, d: int) -> float | None:
    return n / d if d else None


# ------------------------------------------------------------------ dependencies

def score_dependencies(view: GraphView, items: list[dict[str, Any]]) -> dict[str, Any]:
    """Precision over our distinct (dependent, dependency) pairs; recall over gold items."""
    pairs: dict[tuple[str, str], str] = {}
    for s, p, o in view.facts:
        if _slug(p) in DEPENDENCY and o in view.iris:
            pairs.setdefault((s, o), _slug(p))
    links = {item["id"]: chain_links(item["from"], item["to"]) for item in items}
    directed: dict[str, set[tuple[str, str]]] = defaultdict(set)
    undirected: dict[str, set[tuple[str, str]]] = defaultdict(set)
    pair_dir, pair_any = set(), set()
    for pair in pairs:
        sn, on = view.names(pair[0]), view.names(pair[1])
        for item_id, item_links in links.items():
            for a, b in item_links:
                forward = any_match(sn, a) and any_match(on, b)
                if forward or (any_match(sn, b) and any_match(on, a)):
                    undirected[item_id].add(pair)
                    pair_any.add(pair)
                    if forward:
                        directed[item_id].add(pair)
                        pair_dir.add(pair)
    fps = [f"{view.label(s)} —{pairs[(s, o)]}→ {view.label(o)}" for s, o in pairs if (s, o) not in pair_any]
    fns = [f"{i['id']}: {i['from']} -> {i['to']}" for i in items if not undirected.get(i["id"])]
    return {"ours": len(pairs), "gold": len(items), "matched_directed": len(pair_dir),
            "matched_undirected": len(pair_any), "recalled_undirected": len(undirected),
            "recalled_directed": len(directed),
            "precision_directed": _ratio(len(pair_dir), len(pairs)),
            "precision_undirected": _ratio(len(pair_any), len(pairs)),
            "recall_undirected": _ratio(len(undirected), len(items)),
            "recall_directed": _ratio(len(directed), len(items)),
            "false_positives": sorted(fps), "false_negatives": fns}


# ------------------------------------------------------------------ ownership

def _is_trap(item: dict[str, Any]) -> bool:
    relation = item.get("relation", "").lower()
    return "emeritus" in relation or "former" in relation


def score_ownership(view: GraphView, items: list[dict[str, Any]]) -> dict[str, Any]:
    """Ownership facts (thing —is-owned-by…→ owner) and CODEOWNERS rule-owner pairs against gold items;
    any of them naming an emeritus owner (a trap item) is an error."""
    facts = [(s, o, _slug(p)) for s, p, o in view.facts if _slug(p) in OWNERSHIP]
    rules = []  # (rule, pattern, owner or None)
    for rule in view.instances(TG.CodeOwnersRule.iri):
        pattern = pattern_key(view.first(rule, TG.pathPattern.iri) or "")
        owners = view.out[rule].get(TG.codeOwner.iri) or [None]
        rules += [(rule, pattern, owner) for owner in owners]
    current = [i for i in items if not _is_trap(i)]
    trap_owners = [o for i in items if _is_trap(i) for o in i["owners"]]

    def owner_ok(owner: str | None, item: dict[str, Any]) -> bool:
        if owner is None:
            return not item["owners"]
        return any(any_match(view.owner_names(owner), gold) for gold in item["owners"])

    recalled, right, trap_hits = set(), 0, []
    for thing, owner, verb in facts:
        hits = [i["id"] for i in current if any_match(view.names(thing), i["entity"]) and owner_ok(owner, i)]
        recalled.update(hits)
        right += bool(hits)
        if any(any_match(view.owner_names(owner), t) for t in trap_owners):
            trap_hits.append(f"{view.label(thing)} —{verb}→ {view.label(owner)}")
    wrong_pairs = [f"{view.label(t)} —{v}→ {view.label(o)}" for t, o, v in facts
                   if not any(any_match(view.names(t), i["entity"]) and owner_ok(o, i) for i in current)]
    for rule, pattern, owner in rules:
        hits = [i["id"] for i in current if pattern in gold_patterns(i["entity"]) and owner_ok(owner, i)]
        recalled.update(hits)
        right += bool(hits)
        shown = view.label(owner) if owner else "(no owner)"
        if not hits:
            wrong_pairs.append(f"CODEOWNERS {pattern} → {shown}")
        if owner and any(any_match(view.owner_names(owner), t) for t in trap_owners):
            trap_hits.append(f"CODEOWNERS {pattern} → {shown}")
    total = len(facts) + len(rules)
    return {"facts": len(facts), "rule_owner_pairs": len(rules), "gold": len(current), "right": right,
            "recalled": len(recalled), "precision": _ratio(right, total), "recall": _ratio(len(recalled), len(current)),
            "emeritus_errors": len(trap_hits), "emeritus_hits": trap_hits,
            "false_positives": sorted(wrong_pairs),
            "false_negatives": [f"{i['id']}: {i['entity']} → {', '.join(i['owners']) or '(no owner)'}"
                                for i in current if i["id"] not in recalled]}


# ------------------------------------------------------------------ decisions and incidents

def _records_by_file(view: GraphView, cls: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = defaultdict(list)
    for node in view.instances(cls):
        found[view.document_path(node) or "(no document)"].append(node)
    return found


def score_decisions(view: GraphView, items: list[dict[str, Any]]) -> dict[str, Any]:
    """Per gold ADR: a tg:Decision derived from its file; status, why (rationale ≥ 30% of the gold why's
    content words) and date (dc:date = gold ISO date) right, each counted separately."""
    by_file = _records_by_file(view, TG.Decision.iri)
    rows = []
    for item in items:
        nodes = by_file.get(item["file"], [])
        status = any(status_word(view.first(n, TG.decisionStatus.iri) or "") == status_word(item["status"])
                     for n in nodes)
        best = max((overlap(item["why"], view.first(n, TG.rationale.iri) or "") for n in nodes), default=0.0)
        date = any(view.first(n, DC.date.iri) == item["date"] for n in nodes)
        rows.append({"id": item["id"], "found": bool(nodes), "status": status, "why": best >= WHY_THRESHOLD,
                     "why_overlap": round(best, 2), "date": date,
                     "ours": [{"status": view.first(n, TG.decisionStatus.iri), "date": view.first(n, DC.date.iri),
                               "label": view.label(n)} for n in nodes]})
    gold_files = {i["file"] for i in items}
    extra = sorted(f"{path}: {view.label(n)}" for path, nodes in by_file.items() if path not in gold_files
                   for n in nodes)
    return {"gold": len(items), **{k: sum(r[k] for r in rows) for k in ("found", "status", "why", "date")},
            "with_why": sum(r["found"] and r["status"] and r["why"] for r in rows),
            "extra": extra, "items": rows}


def score_incidents(view: GraphView, items: list[dict[str, Any]]) -> dict[str, Any]:
    """Per gold post-mortem: a tg:FailurePattern derived from its file; root cause ≥ 30% of the gold
    root cause's content words; dc:date right; share of gold affected systems among tg:affected."""
    by_file = _records_by_file(view, TG.FailurePattern.iri)
    rows = []
    for item in items:
        nodes = by_file.get(item["file"], [])
        cause = max((overlap(item["root_cause"], view.first(n, TG.rootCause.iri) or "") for n in nodes), default=0.0)
        affected = [a for n in nodes for a in view.out[n].get(TG.affected.iri, [])]
        hit = [g for g in item["affected_systems"] if any(any_match(view.names(a), g) for a in affected)]
        rows.append({"id": item["id"], "found": bool(nodes), "root_cause": cause >= WHY_THRESHOLD,
                     "root_cause_overlap": round(cause, 2),
                     "date": any(view.first(n, DC.date.iri) == item["date"] for n in nodes),
                     "affected": f"{len(hit)}/{len(item['affected_systems'])}"})
    gold_files = {i["file"] for i in items}
    extra = sorted(f"{path}: {view.label(n)}" for path, nodes in by_file.items() if path not in gold_files
                   for n in nodes)
    return {"gold": len(items), **{k: sum(r[k] for r in rows) for k in ("found", "root_cause", "date")},
            "extra": extra, "items": rows}


# ------------------------------------------------------------------ dated changes

def change_links(view: GraphView) -> list[tuple[str, str, str, str | None, bool]]:
    """(old node, new node, how, date, directed): replacement facts (is-replaced-by, replaces …), values of
    one slot where the older record is superseded by the newer, and facts whose predicate names a change
    (CHANGE_STEMS, either way round). The date is the fact's or newer record's valid-from."""
    dates: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    for r in view.records:
        dates[(r.s, r.p, r.o)].append(r.valid_from)
    links = []
    for s, p, o in {*view.facts, *dates}:
        when = min(dates.get((s, p, o), []), default=None)
        slug = _slug(p)
        if slug in REPLACED_BY:
            links.append((s, o, f"fact {slug}", when, True))
        elif slug in REPLACES:
            links.append((o, s, f"fact {slug}", when, True))
        elif any(stem in slug for stem in CHANGE_STEMS):
            links.append((s, o, f"fact {slug}", when, False))
    by_uri = {r.uri: r for r in view.records}
    for r in view.records:
        newer = by_uri.get(r.superseded_by or "")
        if newer is not None and (newer.s, newer.p) == (r.s, r.p):
            links.append((r.o, newer.o, f"slot {_slug(r.p) or r.p} superseded", newer.valid_from, True))
    return links


def score_changes(view: GraphView, items: list[dict[str, Any]]) -> dict[str, Any]:
    """A gold change is found when its old and new values are linked (see change_links) by two nodes each
    matching one value only (a node matching both says nothing); its date is right when the link's date is
    an ISO date the gold gives."""
    links = change_links(view)
    rows = []
    for item in items:
        old, new, wanted = item["old_value"], item["new_value"], iso_dates(item["date"])

        def linked(a: str, b: str) -> bool:
            an, bn = view.names(a), view.names(b)
            return (any_match(an, old) and not any_match(an, new)) and (any_match(bn, new) and not any_match(bn, old))

        found = [(how, when) for a, b, how, when, directed in links if linked(a, b) or (not directed and linked(b, a))]
        rows.append({"id": item["id"], "found": bool(found), "dated": bool(wanted),
                     "date": any(when in wanted for _, when in found),
                     "evidence": [f"{how} ({when or 'no date'})" for how, when in found[:3]]})
    return {"gold": len(items), "found": sum(r["found"] for r in rows),
            "with_iso_date": sum(r["dated"] for r in rows), "date": sum(r["date"] for r in rows), "items": rows}
