"""Turning explain events into the spec's text: `[question] …`, selected edges with their reason and
`Source: Chunk → Page → Document`, retrieved chunks with theirs, an agent's thoughts, actions and
observations. Steps are recognised by their rdf:type, so GraphRAG, Document RAG and agent traces
render alike. Labels and source chains are looked up through the gateway."""

from __future__ import annotations

import re

from tracegraph.base.provenance.vocab import READABLE_PREDICATES
from tracegraph.cli.api import Api
from tracegraph.cli.plurals import counted

TG = "https://trustgraph.ai/ns/"
PROV = "http://www.w3.org/ns/prov#"
RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
RDFS_COMMENT = "http://www.w3.org/2000/01/rdf-schema#comment"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
DC_TITLE = "http://purl.org/dc/elements/1.1/title"
SOURCE = "urn:graph:source"
COMMUNITY = "urn:graph:community"
RAPTOR = "urn:graph:raptor"
LISTED = 10  # report scores and tree visits shown per step (a trace records more)


# rdf:type → the step name printed in `[step] uri`, most specific first.
STEP_TYPES = [("Question", "question"), ("Grounding", "grounding"), ("Exploration", "exploration"),
              ("Focus", "focus"), ("Synthesis", "synthesis"), ("Analysis", "analysis"), ("Conclusion", "conclusion")]


def step_kind(uri: str, triples: list[dict]) -> str | None:
    """The step a trace URI is, from its rdf:type among `triples` (None for a non-step node).

    >>> step_kind("urn:x", [{"s": {"t": "i", "i": "urn:x"}, "p": {"t": "i", "i": RDF_TYPE},
    ...                      "o": {"t": "i", "i": TG + "Conclusion"}}])
    'conclusion'
    """
    types = {text(o) for o in objects(triples, uri, RDF_TYPE)}
    return next((step for kind, step in STEP_TYPES if TG + kind in types), None)


def objects(triples: list[dict], subject: str, predicate: str) -> list[dict]:
    return [t["o"] for t in triples if t["s"].get("i") == subject and t["p"].get("i") == predicate]


def text(term: dict) -> str:
    return term.get("v") or term.get("i") or ""


def line_span(first: dict | None, last: dict | None) -> str:
    """"Line 9" or "Lines 12–14" from two line-number terms; "" when the fact was not placed on lines."""
    if not first or not last:
        return ""
    a, b = text(first), text(last)
    return f"Line {a}" if a == b else f"Lines {a}–{b}"


class TraceRenderer:
    """Prints each explain event as it arrives; keeps a label cache across the session."""

    def __init__(self, api: Api, flow: str, collection: str) -> None:
        self.api, self.flow, self.collection = api, flow, collection
        self.labels: dict[str, str] = {}

    async def _match(self, **pattern) -> list[dict]:
        r = await self.api.flow_service(self.flow, "triples", {**pattern, "collection": self.collection, "limit": 5})
        return r.get("response", [])

    async def label(self, term: dict) -> str:
        if term.get("t") != "i":
            return text(term)
        iri = term["i"]
        if iri not in self.labels:
            found = await self._match(s=term, p={"t": "i", "i": RDFS_LABEL})
            self.labels[iri] = text(found[0]["o"]) if found else READABLE_PREDICATES.get(iri, iri)
        return self.labels[iri]

    async def source_chain(self, edge: dict) -> str:
        """`Lines 12–14 → Chunk 1 → Page 2 → Title` for a quoted edge, from extraction provenance (the lines
        when its subgraph was placed on them)."""
        holders = await self._match(p={"t": "i", "i": TG + "contains"}, o=edge, g=SOURCE)
        if not holders:
            return "(no extraction provenance: the edge was imported or inferred)"
        for holder in holders:
            first = await self._match(s=holder["s"], p={"t": "i", "i": TG + "firstLine"}, g=SOURCE)
            last = await self._match(s=holder["s"], p={"t": "i", "i": TG + "lastLine"}, g=SOURCE)
            if first and last:
                span = line_span(first[0]["o"], last[0]["o"])
                return " → ".join([span, *await self._ancestors(holder["s"])])
        return " → ".join(await self._ancestors(holders[0]["s"]))

    async def chunk_chain(self, chunk: dict) -> str:
        """`Chunk 3 → Page 1 → Title` for a chunk a Document RAG answer used."""
        own = await self._match(s=chunk, p={"t": "i", "i": RDFS_LABEL}, g=SOURCE)
        return " → ".join([text(own[0]["o"]) if own else text(chunk), *await self._ancestors(chunk)])

    async def _ancestors(self, node: dict) -> list[str]:
        """Labels up the `prov:wasDerivedFrom` chain of the source graph, ending with the document's title."""
        chain = []
        for _ in range(6):
            parents = await self._match(s=node, p={"t": "i", "i": PROV + "wasDerivedFrom"}, g=SOURCE)
            if not parents:
                titles = await self._match(s=node, p={"t": "i", "i": DC_TITLE})
                chain.append(text(titles[0]["o"]) if titles else node.get("i", ""))
                break
            node = parents[0]["o"]
            labels = await self._match(s=node, p={"t": "i", "i": RDFS_LABEL}, g=SOURCE)
            if labels:
                chain.append(text(labels[0]["o"]))
        return chain

    async def render(self, explain_id: str, triples: list[dict]) -> list[str]:
        """The lines for one step: `[step] uri`, then what the step recorded."""
        step = step_kind(explain_id, triples) or "step"
        lines = [f"[{step}] {explain_id}"]
        say = lines.append
        if step == "question":
            lines += [f"    Query: {text(q)}" for q in objects(triples, explain_id, TG + "query")]
            lines += [date_phrase_line(triples, p) for p in objects(triples, explain_id, TG + "datePhrase")]
            lines += [f"    {text(c)}" for c in objects(triples, explain_id, RDFS_COMMENT)]
        elif step == "grounding":
            say(f"    Concepts: {', '.join(text(c) for c in objects(triples, explain_id, TG + 'concept'))}")
        elif step == "exploration":
            lines += await self._exploration(explain_id, triples)
        elif step == "focus":
            lines += await self._focus(explain_id, triples)
        elif step == "synthesis":
            lines += [f"    Answer: {_clip(text(c))}" for c in objects(triples, explain_id, TG + "content")]
            lines += [f"    Answer stored as {text(d)}" for d in objects(triples, explain_id, TG + "document")]
        elif step == "analysis":
            lines += _analysis(explain_id, triples)
        elif step == "conclusion":
            lines += [f"    Answer: {_clip(text(a))}" for a in objects(triples, explain_id, TG + "answer")]
            lines += [f"    Ended: {text(r)}" for r in objects(triples, explain_id, TG + "terminationReason")]
        tokens = [objects(triples, explain_id, TG + p) for p in ("inToken", "outToken", "llmModel")]
        if any(tokens):
            say("    Tokens: in {} / out {} ({})".format(*(text(t[0]) if t else "?" for t in tokens)))
        return lines

    async def _exploration(self, uri: str, triples: list[dict]) -> list[str]:
        edges, chunks = objects(triples, uri, TG + "edgeCount"), objects(triples, uri, TG + "chunkCount")
        lines = []
        summaries = objects(triples, uri, TG + "reportScore") or objects(triples, uri, TG + "treeVisit")
        if edges and not summaries:
            seeds = objects(triples, uri, TG + "entity")
            lines.append(f"    Explored {counted(text(edges[0]), 'edge')} from {counted(len(seeds), 'seed entity', 'seed entities')}")
        if chunks:
            lines.append(f"    Retrieved {counted(text(chunks[0]), 'chunk')}")
            for chunk in chunks_by_rank(triples, uri):
                lines.append(f"      Chunk: {await self.chunk_chain(chunk)}")
        lines += [f"    ({text(note)})" for note in objects(triples, uri, RDFS_COMMENT)]
        scores = ranked(triples, objects(triples, uri, TG + "reportScore"))
        for node in scores[:LISTED]:
            lines.append(f"      #{value(triples, node, 'rank')} {value(triples, node, 'mapScore')} "
                         f"{value(triples, node, RDFS_LABEL)} (level {value(triples, node, 'level')})")
            lines.append(f"        Reason: {value(triples, node, 'reasoning')}")
        visits = ranked(triples, objects(triples, uri, TG + "treeVisit"))
        if visits:
            lines.append(f"    Tree walk (expanding branches scoring ≥ {value(triples, uri, 'threshold')}):")
        for node in visits[:LISTED * 3]:
            target = objects(triples, node, TG + "node")
            mark = "expanded" if value(triples, node, "expanded") == "true" else "not expanded"
            name = await self.derived_label(target[0], RAPTOR) if target else "?"
            lines.append(f"      level {value(triples, node, 'level')} {value(triples, node, 'score')} {name}: {mark}")
        return lines

    async def derived_label(self, term: dict, graph: str) -> str:
        """The rdfs:label of a community report or RAPTOR node, from the graph it lives in."""
        iri = term.get("i", "")
        if iri not in self.labels:
            found = await self._match(s=term, p={"t": "i", "i": RDFS_LABEL}, g=graph)
            self.labels[iri] = text(found[0]["o"]) if found else iri
        return self.labels[iri]

    async def _focus(self, uri: str, triples: list[dict]) -> list[str]:
        reports = ranked(triples, objects(triples, uri, TG + "selectedReport"))
        nodes = ranked(triples, objects(triples, uri, TG + "selectedNode"))
        if reports or nodes:
            return await self._kept_summaries(uri, triples, reports, nodes)
        selections = by_score(triples, objects(triples, uri, TG + "selectedEdge"))
        lines = [f"    Selected {counted(len(selections), 'edge')}"]
        lines += [f"    ({text(note)})" for note in objects(triples, uri, RDFS_COMMENT)]
        for risk in ranked(triples, objects(triples, uri, TG + "selectedRisk")):  # a global answer about risks
            lines.append(f"      Risk #{value(triples, risk, 'rank')} [severity {value(triples, risk, 'severity')}] "
                         f"{value(triples, risk, RDFS_LABEL)} ({value(triples, risk, 'riskKind')}, "
                         f"{counted(len(objects(triples, risk, TG + 'evidence')), 'evidence edge')} below)")
            lines.append(f"        Severity: {value(triples, risk, 'reasoning')}")
        for selection in selections:
            edge = objects(triples, selection, TG + "edge")
            if not edge:
                continue
            labels = [await self.label(edge[0]["tr"][k]) for k in ("s", "p", "o")]
            lines.append(f"      Edge: ({', '.join(labels)})")
            lines += [f"        Reason: {text(r)}" for r in objects(triples, selection, TG + "reasoning")]
            lines.append(f"        Source: {await self.source_chain(edge[0])}")
        return lines


    async def _kept_summaries(self, uri: str, triples: list[dict], reports: list[str], nodes: list[str]) -> list[str]:
        """A global answer's kept reports (each with where its facts came from), or a RAPTOR answer's
        kept summaries and passages."""
        lines = [f"    ({text(note)})" for note in objects(triples, uri, RDFS_COMMENT)]
        for node in reports:
            report = objects(triples, node, TG + "report")
            if not report:
                continue
            lines.append(f"      Report: {await self.derived_label(report[0], COMMUNITY)} "
                         f"[score {value(triples, node, 'score')}]")
            lines.append(f"        Reason: {value(triples, node, 'reasoning')}")
            facts = await self._match(s=report[0], p={"t": "i", "i": PROV + "wasDerivedFrom"}, g=COMMUNITY)
            if facts:
                lines.append(f"        Source: {await self.source_chain(facts[0]['o'])}")
        for node in nodes:
            target = objects(triples, node, TG + "node")
            if target:
                lines.append(f"      Summary: {await self.derived_label(target[0], RAPTOR)} "
                             f"[level {value(triples, node, 'level')}, score {value(triples, node, 'score')}]")
        for node in ranked(triples, objects(triples, uri, TG + "chunkSelection")):
            chunk = objects(triples, node, TG + "chunk")
            if chunk:
                lines.append(f"      Chunk: {await self.chunk_chain(chunk[0])} [score {value(triples, node, 'score')}]")
        return lines


def date_phrase_line(triples: list[dict], phrase: dict) -> str:
    """A date phrase of the question: what it was read as, and whether the answer stands at it.

    >>> node = {"t": "i", "i": "urn:p"}
    >>> facts = [("phraseText", "in 2024"), ("resolvedAsOf", "2024-12-31T23:59:59Z"), ("resolvedBy", "year"),
    ...          ("appliedAsOf", "true")]
    >>> date_phrase_line([{"s": node, "p": {"i": TG + p}, "o": {"v": v}} for p, v in facts], node)
    "    Date: 'in 2024' → as of 2024-12-31 (year); the answer stands there"
    """
    as_of = value(triples, phrase, "resolvedAsOf")
    used = "the answer stands there" if value(triples, phrase, "appliedAsOf") == "true" else \
        value(triples, phrase, RDFS_COMMENT) or "not applied"
    return (f"    Date: '{value(triples, phrase, 'phraseText')}' → " + (f"as of {as_of[:10]} " if as_of else "") +
            f"({value(triples, phrase, 'resolvedBy')}); {used}")


def value(triples: list[dict], subject: dict | str, predicate: str) -> str:
    """The first value of a property (a tg: local name, or a full IRI), '' when absent."""
    subject = subject if isinstance(subject, str) else subject.get("i", "")
    found = objects(triples, subject, predicate if ":" in predicate else TG + predicate)
    return text(found[0]) if found else ""


def ranked(triples: list[dict], nodes: list[dict]) -> list[str]:
    """Selection or score nodes in the order of their tg:rank (the order the live stream had)."""
    iris = [n["i"] for n in nodes if n.get("i")]
    return sorted(iris, key=lambda n: int(value(triples, n, "rank") or 0))


def natural_key(uri: str) -> list:
    """Sort key that puts …/i2 before …/i10 (and edge selection …:2 before …:10).

    >>> sorted(["urn:a/i10", "urn:a/i2"], key=natural_key)
    ['urn:a/i2', 'urn:a/i10']
    """
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", uri)]


def by_score(triples: list[dict], selections: list[dict]) -> list[str]:
    """Edge selections best first (tg:score, descending), as the answer listed them; ties and unscored
    selections follow in the order they were made. A store gives a trace's triples back in no order.

    >>> def scored(n, score): return [{"s": {"t": "i", "i": f"urn:e:{n}"}, "p": {"t": "i", "i": TG + "score"},
    ...                                "o": {"t": "l", "v": score}}]
    >>> by_score(scored(10, "0.2") + scored(2, "0.9") + scored(1, "0.2"),
    ...          [{"t": "i", "i": f"urn:e:{n}"} for n in (10, 2, 1, 3)])
    ['urn:e:2', 'urn:e:1', 'urn:e:10', 'urn:e:3']
    """
    def key(uri: str) -> tuple:
        score = value(triples, uri, "score")
        return (not score, -float(score or 0), natural_key(uri))
    return sorted((s["i"] for s in selections if s.get("i")), key=key)


def chunks_by_rank(triples: list[dict], exploration: str) -> list[dict]:
    """The chunks a Document RAG Exploration kept, in the tg:rank of their tg:ChunkSelections (the
    order the answer used them); a chunk without one keeps its place in the order listed, after them.

    >>> def node(s, p, o): return {"s": {"t": "i", "i": s}, "p": {"t": "i", "i": TG + p}, "o": o}
    >>> trace = [node("urn:x", "selectedChunk", {"t": "i", "i": c}) for c in ("urn:c:b", "urn:c:z", "urn:c:a")]
    >>> trace += [node("urn:x", "chunkSelection", {"t": "i", "i": f"urn:x/{c}"}) for c in "ab"]
    >>> trace += [node("urn:x/a", "chunk", {"t": "i", "i": "urn:c:a"}), node("urn:x/a", "rank", {"t": "l", "v": "1"}),
    ...           node("urn:x/b", "chunk", {"t": "i", "i": "urn:c:b"}), node("urn:x/b", "rank", {"t": "l", "v": "2"})]
    >>> [c["i"] for c in chunks_by_rank(trace, "urn:x")]
    ['urn:c:a', 'urn:c:b', 'urn:c:z']
    """
    rank: dict[str, int] = {}
    for selection in ranked(triples, objects(triples, exploration, TG + "chunkSelection")):
        for chunk in objects(triples, selection, TG + "chunk"):
            rank.setdefault(text(chunk), len(rank))
    return sorted(objects(triples, exploration, TG + "selectedChunk"), key=lambda c: rank.get(text(c), len(rank)))


def _analysis(uri: str, triples: list[dict]) -> list[str]:
    """One think / act / observe step of an agent."""
    lines = [f"    Thought: {_clip(text(t))}" for t in objects(triples, uri, TG + "thought")]
    for action in objects(triples, uri, TG + "action"):
        arguments = objects(triples, uri, TG + "arguments")
        lines.append(f"    Action: {text(action)} {text(arguments[0]) if arguments else ''}".rstrip())
    lines += [f"    Observation: {_clip(text(o))}" for o in objects(triples, uri, TG + "observation")]
    lines += [f"    Tool error: {text(e)}" for e in objects(triples, uri, TG + "toolError")]
    lines += [f"    Sub-trace: {text(q)}" for q in objects(triples, uri, TG + "subTrace")]
    return lines


def _clip(value: str, width: int = 400) -> str:
    value = " ".join(value.split())
    return value if len(value) <= width else value[: width - 1] + "…"
