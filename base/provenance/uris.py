"""URI minting. Query-time patterns are the specs' (`urn:trustgraph:…`); extraction-time ids are
deterministic (uuid5 of what identifies them), so re-processing a document mints the same ids
and writes nothing twice."""

from __future__ import annotations

import re
import unicodedata
import uuid
from urllib.parse import quote

TRUSTGRAPH_BASE = "https://trustgraph.ai"
ENTITY_BASE = f"{TRUSTGRAPH_BASE}/e/"
RELATION_BASE = f"{TRUSTGRAPH_BASE}/r/"
_NAMESPACE = uuid.UUID("6f1c2b52-8e7e-5d7f-9a59-3c0a6b1f0d11")


def _stable(*parts: object) -> str:
    return str(uuid.uuid5(_NAMESPACE, "\x1f".join(str(p) for p in parts)))


def slug(label: str) -> str:
    """Lower-case words joined by '-', accents folded: the identity of a label.

    >>> slug("  Acme Corp. (UK) ")
    'acme-corp-uk'
    """
    folded = unicodedata.normalize("NFKD", label).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "-", folded.lower()).strip("-") or "x"


def entity_uri(label: str) -> str:
    """The entity a label names; the same label always gives the same IRI."""
    return ENTITY_BASE + slug(label)


def relation_uri(label: str) -> str:
    return RELATION_BASE + slug(label)


def page_uri(document_id: str, page_number: int) -> str:
    return f"urn:page:{_stable('page', document_id, page_number)}"


def chunk_uri(parent_id: str, index: int, size: int, overlap: int) -> str:
    return f"urn:chunk:{_stable('chunk', parent_id, index, size, overlap)}"


def subgraph_uri(chunk_id: str, extractor: str) -> str:
    return f"{TRUSTGRAPH_BASE}/subgraph/{_stable('subgraph', chunk_id, extractor)}"


def lines_subgraph_uri(chunk_id: str, extractor: str, lines: tuple[int, int]) -> str:
    """The subgraph of the facts a chunk's lines `first`–`last` state."""
    return f"{TRUSTGRAPH_BASE}/subgraph/{_stable('subgraph', chunk_id, extractor, *lines)}"


def statement_uri(subgraph: str, fact_key: str) -> str:
    """A reifier of one fact as one subgraph states it (it carries the text's phrase)."""
    return f"urn:trustgraph:statement:{_stable('statement', subgraph, fact_key)}"


def activity_uri(*identity: object) -> str:
    return f"{TRUSTGRAPH_BASE}/activity/{_stable('activity', *identity)}"


def agent_uri(component: str) -> str:
    return f"{TRUSTGRAPH_BASE}/agent/{quote(component, safe='')}"


def fact_record_uri(fact_key: str, document: str, *episode: str) -> str:
    """One document's statement of a fact. The same in every run that processes the same document;
    a new record of the same statement (the document added again after its removal, a record reopened
    with another end) names its `episode`."""
    return f"urn:trustgraph:fact-record:{_stable('fact-record', fact_key, document, *(e for e in episode if e))}"


def review_item_uri(fact_key: str, chunk_id: str) -> str:
    """A doubtful fact from one chunk: the same chunk processed again finds the same item."""
    return f"urn:trustgraph:review:{_stable('review', fact_key, chunk_id)}"


def user_uri(user: str) -> str:
    """A person acting through the gateway (a reviewer), as a prov:Agent."""
    return f"urn:trustgraph:user:{quote(user, safe='')}"


def source_line_uri(document: str, line: int) -> str:
    """A line of a document facts were read from directly (a CODEOWNERS rule, an ADR's section)."""
    return f"urn:trustgraph:line:{_stable('line', document, line)}"


def codeowners_rule_uri(document: str, line: int) -> str:
    return f"urn:trustgraph:codeowners-rule:{_stable('codeowners-rule', document, line)}"


def memory_uri(document: str, kind: str, line: int, title: str = "") -> str:
    """A decision, failure pattern, exception or memory read from a document: the same in every run (two
    records an LLM placed on one line stay apart by their titles)."""
    return f"urn:trustgraph:memory:{_stable('memory', document, kind, line, title)}"
