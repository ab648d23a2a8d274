"""How the ownership and memory answers read in a terminal, as a colleague would tell them: the current
owner first with the date of its newest source, earlier owners as history with their dates, a replaced
statement marked as such; a decision's why (context, drivers, the chosen option against the others)
with the lines of its document that say it. Works on the gateway's JSON (wire names)."""

from __future__ import annotations

import textwrap
from typing import Any

TEXT_WIDTH = 100


def source_text(source: dict[str, Any]) -> str:
    """Where a claim comes from, as a person reads it.

    >>> source_text({"document": "urn:doc:7", "title": "Service catalog", "line": 12})
    'Service catalog, line 12'
    >>> source_text({"document": "urn:doc:7", "title": "services/billing/README.md", "line": 12, "last_line": 14})
    'services/billing/README.md, lines 12–14'
    >>> source_text({"document": "urn:doc:7"})
    'urn:doc:7'
    """
    return (source.get("title") or source.get("document") or "?") + lines_text(source, ", ")


def lines_text(place: dict[str, Any], before: str = "") -> str:
    """`before` and "line 9" or "lines 9–14" for a place with a line (`last_line` or `last-line`), else "".

    >>> lines_text({"line": 9, "last-line": 14}), lines_text({"line": 3}, " "), lines_text({})
    ('lines 9–14', ' line 3', '')
    """
    if place.get("line") is None:
        return ""
    last = place.get("last_line") or place.get("last-line")
    return before + (f"lines {place['line']}–{last}" if last and last != place["line"] else f"line {place['line']}")


def dated_source_text(source: dict[str, Any]) -> str:
    """A source with its date, and, when a later statement replaced it, which one and from when.

    >>> dated_source_text({"title": "review-2025.md", "line": 5, "date": "2025-09-15"})
    'review-2025.md, line 5 (2025-09-15)'
    >>> dated_source_text({"title": "CODEOWNERS", "line": 9, "added": "2026-11-27"})
    'CODEOWNERS, line 9 (undated; added 2026-11-27)'
    >>> dated_source_text({"title": "review-2024.md", "line": 5, "date": "2024-03-04",
    ...                    "superseded-by": {"title": "review-2025.md", "line": 5, "date": "2025-09-15"}})
    'review-2024.md, line 5 (2024-03-04; superseded on 2025-09-15 by review-2025.md, line 5)'
    """
    when = source.get("date") or ("undated; added " + source["added"] if source.get("added") else "")
    later = source.get("superseded-by")
    if later:
        on = f" on {later['date']}" if later.get("date") else ""
        when = "; ".join(filter(None, (when, f"superseded{on} by {source_text(later)}")))
    return source_text(source) + (f" ({when})" if when else "")


def joined(texts: list[str]) -> str:
    return "; ".join(dict.fromkeys(t for t in texts if t))


def _wrapped(text: str, indent: str, then: str | None = None) -> str:
    """`text` on lines of TEXT_WIDTH, the first indented by `indent`, the others by `then` (or `indent`)."""
    return textwrap.fill(" ".join(text.split()), TEXT_WIDTH, initial_indent=indent,
                         subsequent_indent=indent if then is None else then)


# --- tg-show-ownership ----------------------------------------------------------------------------

AGREEMENT = {
    "agree": "the graph and CODEOWNERS agree",
    "disagree": "the graph and CODEOWNERS disagree",
    "graph-only": "from the graph; no CODEOWNERS rule covers it",
    "codeowners-only": "from CODEOWNERS; the graph names no owner",
}
NEWER = {"graph": "the graph is newer", "codeowners": "CODEOWNERS is newer",
         "same": "both sides dated alike", "unknown": "which is newer cannot be told"}
PATH_ORIGIN = {"graph": "its code path in the graph", "name": "a directory named like it"}


def print_ownership(response: dict[str, Any], name: str) -> None:
    answer = response.get("ownership") or {}
    owners, rules = answer.get("owners", []), answer.get("codeowners", [])
    current = [o for o in owners if o.get("standing", "current") == "current"]
    earlier = [o for o in owners if o.get("standing") == "earlier"]
    if not owners:
        print(f"no owner known for {name}")
    elif current:
        print(headline(name, current[0]))
    how = "; ".join(filter(None, (AGREEMENT.get(answer.get("agreement", ""), "as found"),
                                  NEWER.get(answer.get("newer", "")))))
    if current:
        print(f"Current owners ({how}):")
    for owner in current:
        _print_owner(owner)
    if earlier:
        print("Earlier owners:" if current else f"Earlier owners ({how}):")
    for owner in earlier:
        _print_owner(owner)
    if rules:
        print("CODEOWNERS:")
    for rule in rules:
        origin = PATH_ORIGIN.get(rule.get("path-origin", ""), "")
        where = rule["source"].get("title") or rule["source"].get("document", "?")
        line = f":{rule['source']['line']}" if rule["source"].get("line") is not None else ""
        print(f"  {rule['path']} → {rule['pattern']}  {' '.join(rule.get('owners', [])) or '(no owners)'}  "
              f"{where}{line}" + (f"  ({origin})" if origin else ""))
    if answer.get("discrepancy"):
        print(f"Discrepancy: {answer['discrepancy']}")


def headline(name: str, owner: dict[str, Any]) -> str:
    """Who owns it now, and the newest source saying so.

    >>> headline("Skyline", {"label": "Grid Analytics", "handles": ["@corvid/grid-analytics"], "sources": [
    ...     {"title": "review-2024.md", "date": "2024-03-04"}, {"title": "review-2025.md", "date": "2025-09-15"}]})
    'Skyline is owned by Grid Analytics (@corvid/grid-analytics), as its newest source says: review-2025.md, dated 2025-09-15.'
    """
    handles = [h for h in owner.get("handles", []) if h != owner["label"]]
    who = owner["label"] + (f" ({', '.join(handles)})" if handles else "")
    sources = [s for s in owner.get("sources", []) if not s.get("superseded-by")]
    dated = [s for s in sources if s.get("date")]
    if dated:
        newest = max(dated, key=lambda s: s["date"])
        return f"{name} is owned by {who}, as its newest source says: {source_text(newest)}, dated {newest['date']}."
    if sources:
        return f"{name} is owned by {who}, as {joined([source_text(s) for s in sources])} says."
    return f"{name} is owned by {who}."


def _print_owner(owner: dict[str, Any]) -> None:
    print("  " + "  ".join(part for part in (owner["label"], owner.get("kind", ""), " ".join(owner.get("handles", [])),
                                             _period(owner)) if part))
    if owner.get("relations"):
        print(f"    how: {', '.join(owner['relations'])}")
    if owner.get("sources"):
        print(f"    sources: {joined([dated_source_text(s) for s in owner['sources']])}")


def _period(owner: dict[str, Any]) -> str:
    """When it owned: "since 2025-09-15" (current), "2024-03-04 – 2025-09-15" (earlier), or ""."""
    since, until = owner.get("since", ""), owner.get("until", "")
    if owner.get("standing", "current") == "current":
        return f"since {since}" if since else ""
    if since and until:
        return f"{since} – {until}"
    return f"until {until}" if until else (f"from {since}" if since else "")


# --- tg-show-memory -------------------------------------------------------------------------------

PARTS = {"context": "Context", "driver": "Decision drivers", "option": "Options considered",
         "consequence": "Consequences", "root-cause": "Root cause", "impact": "Impact",
         "action-item": "Action items", "policy": "Policy"}
WHY_OF = {"decision": "Why", "failure-pattern": "Root cause", "exception": "Policy"}


def print_memory(response: dict[str, Any], name: str) -> None:
    answer = response.get("memory") or {}
    items = answer.get("items", [])
    if not items:
        print(f"no decisions, failure patterns, exceptions or memories about {name}")
        return
    ranking = f" (ranked by {answer['ranking']})" if answer.get("ranking") else ""
    print(f"Memory about {name}{ranking}:")
    for rank, item in enumerate(items, 1):
        source = item.get("source", {})
        status = f"  [{item['status']}]" if item.get("status") else ""
        print(f"{rank:2}. {item['kind']}: {item['title']}{status}")
        about = [source.get("date", ""), source.get("author", ""), item.get("relation", ""),
                 f"score {item.get('score', 0.0):.2f}", source_text(source)]
        print("    " + " · ".join(part for part in about if part))
        if item.get("text"):
            print(_wrapped(item["text"], "    "))
        print_reasons(item)


def print_reasons(item: dict[str, Any]) -> None:
    """Why it is as it is, part by part in the order PARTS gives, each with its lines; the options with
    the chosen one first. An item whose parts were not read separately prints its `why` as one text."""
    reasons = item.get("reasons", [])
    if not reasons and item.get("why"):
        print(_wrapped(f"{WHY_OF.get(item.get('kind', ''), 'Context')}: {item['why']}", "    "))
    for part, label in PARTS.items():
        these = [r for r in reasons if r.get("part") == part]
        if len(these) == 1 and part != "option":
            print(_wrapped(f"{label}{_lines(these[0])}: {these[0]['text']}", "    ", "      "))
            continue
        if these:
            print(f"    {label}:")
        for reason in sorted(these, key=lambda r: not r.get("chosen")):
            if part == "option":
                head = ("chosen" if reason.get("chosen") else "not chosen") + _lines(reason) + ":"
            else:
                head = "- " + (f"{lines_text(reason)}:" if reason.get("line") is not None else "")
            print(_wrapped(f"{head} {reason['text']}", "      ", "        "))


def _lines(reason: dict[str, Any]) -> str:
    return f" ({lines_text(reason)})" if reason.get("line") is not None else ""
