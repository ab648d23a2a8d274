"""Printing bench/architecture_public.py's figures: one table per extraction feature (per system and in
total), the answer verdicts per service and question type, and with --verbose the items behind them."""

from __future__ import annotations

from collections import Counter
from statistics import median
from typing import Any

QUESTION_TYPES = ("ownership", "dependency", "why", "what-changed", "incident", "strategic")


def cell(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _rows(report: dict[str, Any], feature: str) -> list[tuple[str, dict[str, Any]]]:
    rows = [(system, figures[feature]) for system, figures in report["extraction"].items()]
    return rows + [("total", report["extraction_total"][feature])]


def print_extraction(report: dict[str, Any], verbose: bool) -> None:
    print("\nDependencies (pairs of depends-on/calls/uses/reads-from/writes-to/publishes-to/consumes-from/runs-on)")
    print(f"  {'system':<20}{'ours':>6}{'gold':>6}{'P dir':>8}{'P undir':>9}{'R undir':>9}{'R dir':>8}")
    for system, f in _rows(report, "dependencies"):
        print(f"  {system:<20}{f['ours']:>6}{f['gold']:>6}{cell(f['precision_directed']):>8}"
              f"{cell(f['precision_undirected']):>9}{cell(f['recall_undirected']):>9}{cell(f['recall_directed']):>8}")
    print("\nOwnership (facts is-owned-by/-maintained-by/-led-by/-operated-by/has-on-call + CODEOWNERS rule owners)")
    print(f"  {'system':<20}{'facts':>6}{'rules':>6}{'gold':>6}{'P':>7}{'R':>7}{'emeritus errors':>17}")
    for system, f in _rows(report, "ownership"):
        print(f"  {system:<20}{f['facts']:>6}{f['rule_owner_pairs']:>6}{f['gold']:>6}{cell(f['precision']):>7}"
              f"{cell(f['recall']):>7}{f['emeritus_errors']:>17}")
    print("\nDecisions (one gold ADR each; why = rationale holds >= 30% of the gold why's content words)")
    print(f"  {'system':<20}{'gold':>6}{'found':>7}{'status':>8}{'why':>6}{'date':>6}{'all 3':>7}{'extra':>7}")
    for system, f in _rows(report, "decisions"):
        extra = len(f["extra"]) if "extra" in f else ""
        print(f"  {system:<20}{f['gold']:>6}{f['found']:>7}{f['status']:>8}{f['why']:>6}{f['date']:>6}"
              f"{f['with_why']:>7}{extra:>7}")
    print("\nIncidents (one gold post-mortem each; root cause >= 30% of the gold's content words)")
    print(f"  {'system':<20}{'gold':>6}{'found':>7}{'cause':>7}{'date':>6}{'extra':>7}")
    for system, f in _rows(report, "incidents"):
        extra = len(f["extra"]) if "extra" in f else ""
        print(f"  {system:<20}{f['gold']:>6}{f['found']:>7}{f['root_cause']:>7}{f['date']:>6}{extra:>7}")
    print("\nDated changes (old and new value linked; date = the link's date is the gold ISO date)")
    print(f"  {'system':<20}{'gold':>6}{'found':>7}{'ISO-dated':>11}{'date right':>12}")
    for system, f in _rows(report, "dated_changes"):
        print(f"  {system:<20}{f['gold']:>6}{f['found']:>7}{f['with_iso_date']:>11}{f['date']:>12}")
    if verbose:
        print_extraction_items(report)


def print_extraction_items(report: dict[str, Any]) -> None:
    for system, f in report["extraction"].items():
        print(f"\n--- {system}")
        for feature in ("dependencies", "ownership"):
            for kind in ("false_positives", "false_negatives"):
                lines = f[feature][kind]
                print(f"  {feature} {kind.replace('_', ' ')} ({len(lines)}):")
                for line in lines:
                    print(f"    {line}")
        for line in f["ownership"]["emeritus_hits"]:
            print(f"  ownership emeritus error: {line}")
        for row in f["decisions"]["items"]:
            ours = "; ".join(f"{o['status']} {o['date']} {o['label'][:50]}" for o in row["ours"]) or "none"
            print(f"  decision {row['id']}: found {row['found']} status {row['status']} why {row['why']} "
                  f"({row['why_overlap']}) date {row['date']}  [ours: {ours}]")
        for line in f["decisions"]["extra"]:
            print(f"  decision not in gold: {line}")
        for row in f["incidents"]["items"]:
            print(f"  incident {row['id']}: found {row['found']} cause {row['root_cause']} "
                  f"({row['root_cause_overlap']}) date {row['date']} affected {row['affected']}")
        for line in f["incidents"]["extra"]:
            print(f"  failure pattern not in gold: {line}")
        for row in f["dated_changes"]["items"]:
            print(f"  change {row['id']}: found {row['found']} date {row['date'] if row['dated'] else 'n/a'}"
                  f"  {'; '.join(row['evidence'])}")


def print_questions(report: dict[str, Any], verbose: bool, key: str = "questions") -> None:
    rows = report[key]
    services = list(dict.fromkeys(s for row in rows for s in row["services"]))
    print(f"\nQuestions{' asked lower-cased' if key.endswith('lower_case') else ''}: right / partly / wrong "
          "(right = >= half the gold key terms AND a gold support file cited)")
    print(f"  {'service':<14}{'all':>10}" + "".join(f"{t:>14}" for t in QUESTION_TYPES) + f"{'errors':>8}{'p50 ms':>8}")
    for service in services:
        def tally(kind: str | None) -> str:
            verdicts = Counter(r["services"][service]["verdict"] for r in rows
                               if service in r["services"] and kind in (None, r["type"]))
            return f"{verdicts['right']}/{verdicts['partly']}/{verdicts['wrong']}" if verdicts else "-"
        errors = sum(bool(r["services"].get(service, {}).get("error")) for r in rows)
        times = [r["services"][service]["ms"] for r in rows if "ms" in r["services"].get(service, {})]
        p50 = f"{median(times):.0f}" if times else "-"
        print(f"  {service:<14}{tally(None):>10}" + "".join(f"{tally(t):>14}" for t in QUESTION_TYPES)
              + f"{errors:>8}{p50:>8}")
    print("  (route: the architecture route of the question's type about the first entity it names; "
          "ownership, dependency and why questions only)")
    if not verbose:
        return
    for row in rows:
        print(f"\n{row['id']} [{row['type']}, {row['system']}] {row['question']}")
        print(f"  key terms ({len(row['terms'])}): {', '.join(row['terms'])}")
        print(f"  gold support: {', '.join(row['support'])}")
        for service, out in row["services"].items():
            entity = f" about '{out['entity']}'" if out.get("entity") else ""
            missing = [t for t in row["terms"] if t not in out["found_terms"]]
            print(f"  {service}{entity}: {out['verdict'].upper()}  terms {len(out['found_terms'])}/{len(row['terms'])}"
                  f"  gold sources cited {len(out['gold_sources'])}/{len(out['sources'])} returned"
                  + (f"  ERROR {out['error'][:120]}" if out.get("error") else "")
                  + (f"  ({out['note']})" if out.get("note") else ""))
            print(f"    missing: {', '.join(missing) or '-'}")
            print(f"    answer: {' '.join(out['answer'].split())[:240]}")


def print_report(report: dict[str, Any], verbose: bool) -> None:
    ingest = report.get("ingest")
    print(f"\ncode {report['code']}; systems {', '.join(report['systems'])}")
    if ingest:
        print(f"ingest: {ingest['files']} files, {ingest['chunks']} chunks in {ingest['seconds']:.0f} s "
              f"({ingest['files_per_second']:.2f} files/s) through the default flow, of which "
              f"{ingest['settle_seconds']:.0f} s waiting for the stores and indexes to settle (3 s polls)")
    else:
        print("ingest: reused stores (no ingest this run)")
    print_extraction(report, verbose)
    print_questions(report, verbose)
    if report.get("questions_lower_case"):
        print_questions(report, False, "questions_lower_case")
    sample = report.get("junk_sample")
    if sample:
        print(f"\nJunk sample: {len(sample)} knowledge facts at random (seed 7), for a person to judge")
        for n, fact in enumerate(sample, 1):
            print(f"  {n:>3}. [{fact['collection']}] {fact['subject']} | {fact['predicate']} | {fact['object']}")
            print(f"       ← {'; '.join(fact['sources'][:2]) or '(no source found)'}"
                  + (f" (+{len(fact['sources']) - 2} more)" if len(fact["sources"]) > 2 else ""))
