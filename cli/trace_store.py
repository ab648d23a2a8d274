"""Reading stored explain traces back through the gateway: which trace a URI belongs to, all of a
trace's triples (with the sub-traces an agent's steps produced), and the list of traces."""

from __future__ import annotations

import re
from dataclasses import dataclass

from tracegraph.base.errors import ConfigError
from tracegraph.base.provenance import agent, docrag
from tracegraph.base.provenance import query as graph_rag
from tracegraph.cli.api import Api

RETRIEVAL = "urn:graph:retrieval"
TG = "https://trustgraph.ai/ns/"
PROV = "http://www.w3.org/ns/prov#"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"

# Question type -> the kind shown, most specific first: a global answer's Question is also a search
# Question, and a search Question also a GraphRAG one.
KINDS = {"GlobalQuestion": "Global", "RaptorQuestion": "RAPTOR", "SearchQuestion": "Search",
         "GraphRagQuestion": "GraphRAG", "DocRagQuestion": "DocRAG", "AgentQuestion": "Agent"}

# Every URI of a trace carries its session id; the Question's URI is rebuilt from it by the same
# builders that minted it.
_PATTERNS = [
    (re.compile(r"^urn:trustgraph:question:([^:/]+)$"), graph_rag.question_uri),
    (re.compile(r"^urn:trustgraph:prov:(?:grounding|exploration|focus|synthesis):([^:/]+)$"), graph_rag.question_uri),
    (re.compile(r"^urn:trustgraph:prov:edge:([^:/]+):\d+$"), graph_rag.question_uri),
    (re.compile(r"^urn:trustgraph:synthesis:([^:/]+)$"), graph_rag.question_uri),
    (re.compile(r"^urn:trustgraph:docrag:([^:/]+)(?:/.*)?$"), docrag.question_uri),
    (re.compile(r"^urn:trustgraph:prov:chunk:([^:/]+):\d+$"), docrag.question_uri),
    (re.compile(r"^urn:trustgraph:agent:([^:/]+)(?:/.*)?$"), agent.question_uri),
]


def question_of(uri: str) -> tuple[str, str]:
    """(session id, Question URI) of any URI of a trace.

    >>> question_of("urn:trustgraph:prov:focus:6f1c")
    ('6f1c', 'urn:trustgraph:question:6f1c')
    >>> question_of("urn:trustgraph:agent:a1/i2")
    ('a1', 'urn:trustgraph:agent:a1')
    >>> question_of("urn:trustgraph:docrag:d9/exploration")
    ('d9', 'urn:trustgraph:docrag:d9')
    """
    for pattern, question in _PATTERNS:
        found = pattern.match(uri)
        if found:
            return found.group(1), question(found.group(1))
    raise ConfigError(f"{uri!r} is not an explain URI (urn:trustgraph:question:…, urn:trustgraph:docrag:…, "
                      "urn:trustgraph:agent:… or one of their steps)")


TRACE = """SELECT ?s ?p ?o WHERE { GRAPH <urn:graph:retrieval> { ?s ?p ?o FILTER(CONTAINS(STR(?s), "%s")) } }"""


async def _session_triples(api: Api, flow: str, collection: str, sid: str) -> list[dict]:
    r = await api.flow_service(flow, "sparql", {"query": TRACE % sid, "collection": collection, "limit": 100_000})
    return [{"s": b["s"], "p": b["p"], "o": b["o"], "g": RETRIEVAL} for b in r.get("bindings", [])]


def sub_traces(triples: list[dict]) -> list[str]:
    """The Questions of the traces an agent's steps produced (`tg:subTrace`)."""
    return [t["o"]["i"] for t in triples if t["p"].get("i") == TG + "subTrace" and t["o"].get("t") == "i"]


async def fetch_trace(api: Api, flow: str, collection: str, uri: str) -> tuple[str, list[dict]]:
    """(Question URI, every triple of the trace and of its sub-traces); ConfigError if none is stored."""
    sid, question = question_of(uri)
    triples = await _session_triples(api, flow, collection, sid)
    if not triples:
        raise ConfigError(f"no stored trace for {uri} in collection {collection!r}")
    seen = {sid}
    pending = sub_traces(triples)
    while pending:
        sub_sid, _ = question_of(pending.pop())
        if sub_sid not in seen:
            seen.add(sub_sid)
            found = await _session_triples(api, flow, collection, sub_sid)
            triples += found
            pending += sub_traces(found)
    return question, triples


@dataclass(frozen=True)
class TraceSummary:
    id: str
    kind: str
    question: str
    time: str
    parent: str | None


def _listing_query(kind: str | None, since: str | None, sub_traces_too: bool, limit: int) -> str:
    filters = []
    if kind:
        filters.append(f"?q a tg:{next(k for k, v in KINDS.items() if v.lower() == kind.lower())} .")
    if since:
        filters.append(f'FILTER(STR(?time) >= "{since}")')
    if not sub_traces_too:
        filters.append("FILTER NOT EXISTS { ?q prov:wasDerivedFrom ?anything }")
    return f"""
PREFIX tg: <{TG}>
PREFIX prov: <{PROV}>
SELECT ?q (GROUP_CONCAT(STR(?type); SEPARATOR=" ") AS ?types) ?query ?time ?parent WHERE {{ GRAPH <{RETRIEVAL}> {{
  ?q a tg:Question ; a ?type ; tg:query ?query .
  FILTER(?type IN ({", ".join(f"tg:{k}" for k in KINDS)}))
  OPTIONAL {{ ?q prov:startedAtTime ?time }}
  OPTIONAL {{ ?q prov:wasDerivedFrom ?parent }}
  {' '.join(filters)}
}} }} GROUP BY ?q ?query ?time ?parent ORDER BY DESC(?time) LIMIT {limit}"""


def _kind(types: str) -> str:
    """The most specific kind among a Question's types (space-separated IRIs)."""
    found = {t.removeprefix(TG) for t in types.split()}
    return next(name for k, name in KINDS.items() if k in found)


async def list_traces(api: Api, flow: str, collection: str, *, kind: str | None = None, since: str | None = None,
                      sub_traces_too: bool = False, limit: int = 50) -> list[TraceSummary]:
    """The collection's traces, newest first; sub-traces (an agent tool's RAG runs) only when asked."""
    if kind and kind.lower() not in {v.lower() for v in KINDS.values()}:
        raise ConfigError(f"unknown trace type {kind!r}; use one of {', '.join(KINDS.values())}")
    if since and not re.fullmatch(r"\d{4}-\d{2}-\d{2}(T[0-9:.]+Z?)?", since):
        raise ConfigError(f"--since {since!r}: use an ISO date or time, e.g. 2026-11-23 or 2026-11-23T10:00:00Z")
    r = await api.flow_service(flow, "sparql", {"query": _listing_query(kind, since, sub_traces_too, limit),
                                                "collection": collection})
    return [TraceSummary(id=b["q"]["i"], kind=_kind(b["types"]["v"]), question=b["query"]["v"],
                         time=b.get("time", {}).get("v", ""), parent=b.get("parent", {}).get("i"))
            for b in r.get("bindings", [])]
