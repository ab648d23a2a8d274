"""Global questions answered from what the graph knows, without I/O: what a strategic question asks
(risks, the platform's structure, or an overview the community reports answer), how many risks it asks
for, and the offline answers — the computed risks ranked by severity with their evidence and sources,
or the main groups and the dependencies between them — and the prompts that give an LLM the same."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from tracegraph.base.architecture.landscape import Evidence, Landscape, place
from tracegraph.base.architecture.risks import KIND_NAMES, Risk
from tracegraph.base.architecture.structure import Structure
from tracegraph.base.stores.keyword import sentence

Intent = Literal["risks", "structure", "overview"]
DEFAULT_RISKS = 5
MOST_RISKS = 10
EVIDENCE_SHOWN = 4  # facts quoted under each risk in the answer (the trace keeps them all)
_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
          "ten": 10}
_COUNT = "|".join([r"\d{1,2}", *_WORDS])
_RISK = re.compile(r"\b(?:risk(?:s|y|iest)?|single points? of failure|spofs?|"
                   r"weak(?:est|nesses)?(?:\s+(?:spots?|points?|links?))?|fragil\w*|vulnerab\w*|bottlenecks?|"
                   r"hot ?spots?|danger\w*|threats?|could (?:go wrong|break|fail)|tech(?:nical)? debt)\b")
_STRUCTURE = re.compile(r"\b(?:structur\w*|organi[sz]\w*|laid out|architected|put together|fits? together|"
                        r"components?|building blocks|subsystems|layers|domains|groups|modules|parts|landscape|"
                        r"architecture|topology|connect\w*)\b")
_ASKED = re.compile(rf"\b(?:top|first|biggest|main|largest|worst|key|greatest)\s+({_COUNT})\b|"
                    rf"\b({_COUNT})\s+(?:[a-z-]+\s+){{0,2}}(?:risks?|weak|single|threats|dangers|concerns)\b")
RISK_SYSTEM = ("You answer questions about the risks of a software architecture from the risks computed over its "
               "knowledge graph. Use only the risks and facts given; rank them as given unless the question asks "
               "otherwise; name each risk's evidence and sources.")
STRUCTURE_SYSTEM = ("You describe how a software platform is structured from the groups of its knowledge graph and "
                    "the dependencies between them. Use only what you are given.")


def global_intent(question: str) -> Intent:
    """What a strategic question asks of the graph.

    >>> global_intent("What are our top 3 architectural risks?"), global_intent("How is the platform structured?")
    ('risks', 'structure')
    >>> global_intent("Summarise the corpus")
    'overview'
    """
    text = question.lower()
    if _RISK.search(text):
        return "risks"
    return "structure" if _STRUCTURE.search(text) else "overview"


def asked_count(question: str, default: int = DEFAULT_RISKS, most: int = MOST_RISKS) -> int:
    """How many risks the question asks for.

    >>> asked_count("What are our top 3 architectural risks?"), asked_count("name the two worst risks")
    (3, 2)
    >>> asked_count("What are the risks of moving in 2024?")
    5
    """
    found = _ASKED.search(question.lower())
    if not found:
        return default
    word = found.group(1) or found.group(2)
    count = int(word) if word.isdigit() else _WORDS[word]
    return max(1, min(count, most))


def evidence_labels(landscape: Landscape) -> dict[str, str]:
    """Names for every node a risk's facts mention: entities, records (their titles), CODEOWNERS rules."""
    labels = dict(landscape.labels)
    labels.update({r.node: r.title for r in landscape.records})
    for claim in landscape.owners:
        if claim.origin == "codeowners" and claim.evidence.sources:
            source = claim.evidence.sources[0]
            labels[claim.evidence.fact.s.iri] = f"the {source.title or 'CODEOWNERS'} rule of line {source.line}"
    return labels


def evidence_line(evidence: Evidence, labels: dict[str, str]) -> str:
    """"Storage Gateway depends on Orbis Cloud (adr-0007 line 14, 2024-05-10)"."""
    where = "; ".join(dict.fromkeys(place(s) for s in evidence.sources)) or "no source recorded"
    return f"{sentence(evidence.fact, labels)} ({where})"


def risk_answer(risks: Sequence[Risk], total: int, landscape: Landscape) -> str:
    """The risks kept, most severe first, each with its measure, its evidence and their sources."""
    head = "Offline answer (no LLM configured)"
    if not risks:
        return (f"{head}: the graph shows no architectural risk. It records {len(landscape.dependencies)} "
                f"dependencies, {len(landscape.owners)} ownership statements and {len(landscape.records)} decisions "
                "or incidents; risks are computed from those (hubs and single points of failure, dependency cycles, "
                "incidents, disputed or stale ownership, superseded decisions still cited).")
    labels = evidence_labels(landscape)
    shown = f"the {len(risks)} most severe of {total}" if total > len(risks) else f"all {total}"
    lines = [f"{head}: {shown} architectural risks computed from the graph's dependencies, owners and records, "
             "by severity:"]
    for rank, risk in enumerate(risks, start=1):
        lines.append(f"{rank}. {risk.title} (severity {risk.severity:.2f}). {risk.detail}")
        lines.append(f"   Severity of a {KIND_NAMES[risk.kind]}: {risk.measure}.")
        quoted = [evidence_line(e, labels) for e in risk.evidence[:EVIDENCE_SHOWN]]
        more = len(risk.evidence) - len(quoted)
        rest = f"; and {more} more fact(s) in the trace" if more > 0 else ""
        lines.append("   Evidence: " + "; ".join(quoted) + rest)
    return "\n".join(lines)


def structure_answer(structure: Structure, landscape: Landscape, inside: int = 4) -> str:
    """The main groups, each with its services and what depends on what inside it, then the links."""
    head = "Offline answer (no LLM configured)"
    if not structure.groups:
        return f"{head}: the collection has no communities yet, so its structure cannot be told."
    left = f"; {structure.others} more group(s) hold no dependency" if structure.others else ""
    lines = [f"{head}, from the graph's communities and its dependencies: the platform falls into "
             f"{len(structure.groups)} main group(s) (level-{structure.level} communities{left}):"]
    titles = {g.community: g.title for g in structure.groups}
    for number, group in enumerate(structure.groups, start=1):
        services = f"; services: {landscape.names(group.services[:6])}" if group.services else ""
        told = "; ".join(_dependency_sentence(landscape, d) for d in group.inside[:inside])
        lines.append(f"{number}. {group.title} ({len(group.members)} entities{services})"
                     + (f": {told}." if told else "."))
    if structure.links:
        lines.append("How the groups connect:")
        for link in structure.links:
            told = "; ".join(_dependency_sentence(landscape, d) for d in link.dependencies[:inside])
            lines.append(f"- {titles[link.source]} → {titles[link.target]}: {told}.")
    else:
        lines.append("No dependency links one group to another.")
    return "\n".join(lines)


def risk_prompt(question: str, risks: Sequence[Risk], landscape: Landscape) -> str:
    labels = evidence_labels(landscape)
    lines = [f"Question: {question}", "", "Risks computed over the knowledge graph, most severe first:"]
    for rank, risk in enumerate(risks, start=1):
        lines += [f"[{rank}] {risk.title} ({KIND_NAMES[risk.kind]}, severity {risk.severity:.2f}): {risk.detail}",
                  *(f"    - {evidence_line(e, labels)}" for e in risk.evidence[:8])]
    return "\n".join(lines)


def structure_prompt(question: str, answer: str) -> str:
    return f"Question: {question}\n\nThe platform's groups and their dependencies:\n{answer}"


def _dependency_sentence(landscape: Landscape, dependency) -> str:
    return f"{landscape.name(dependency.dependent)} {dependency.relation} {landscape.name(dependency.dependency)}"
