"""Processors by name (`tg-processor NAME`), imported lazily, and the packaged flow blueprints and agent tools."""

from __future__ import annotations

import json
from collections.abc import Callable
from importlib import resources

from tracegraph.base.bus.protocol import Backend
from tracegraph.base.plugins import load
from tracegraph.base.processor import Processor
from tracegraph.base.settings import RuntimeSettings

ProcessorFactory = Callable[[Backend, RuntimeSettings], Processor]

# name -> "module:callable(backend, settings)"; the default stack starts them in this order.
PROCESSORS: dict[str, str] = {
    "config": "tracegraph.launch.registry:config_service",
    "librarian": "tracegraph.flow.librarian.processor:LibrarianProcessor",
    "triples": "tracegraph.flow.triples.processor:TriplesProcessor",
    "keyword-index": "tracegraph.flow.keyword_index:KeywordIndexProcessor",
    "embeddings": "tracegraph.flow.embeddings:EmbeddingsProcessor",
    "graph-embeddings": "tracegraph.flow.vectors:GraphEmbeddingsProcessor",
    "document-embeddings": "tracegraph.flow.vectors:DocumentEmbeddingsProcessor",
    "text-completion": "tracegraph.flow.text_completion:TextCompletionProcessor",
    "kg-extract": "tracegraph.flow.kg_extract.processor:KnowledgeExtractor",
    "chunker": "tracegraph.flow.chunker:ChunkerProcessor",
    "architecture-extract": "tracegraph.flow.architecture.extractor:ArchitectureExtractor",
    "graph-rag": "tracegraph.flow.graph_rag.processor:GraphRagProcessor",
    "search": "tracegraph.flow.search.processor:SearchProcessor",
    "community": "tracegraph.flow.derived.community:CommunityProcessor",
    "raptor": "tracegraph.flow.derived.raptor:RaptorProcessor",
    "document-rag": "tracegraph.flow.document_rag.processor:DocumentRagProcessor",
    "agent": "tracegraph.flow.agent.processor:AgentProcessor",
    "explainability": "tracegraph.flow.explainability:ExplainabilityWriter",
    "ping": "tracegraph.flow.ping:PingProcessor",
    "gateway": "tracegraph.flow.gateway.app:GatewayProcessor",
}

# name -> what it does, in one line: `tg-processor --help` lists these without importing anything.
DESCRIPTIONS: dict[str, str] = {
    "config": "the config service: flow blueprints, running flows, agent tools; pushes changes to every processor",
    "librarian": "stores uploaded documents and sends them into a flow for processing",
    "triples": "the triple store: writes facts and answers pattern and SPARQL queries",
    "keyword-index": "a BM25 keyword index of each collection's facts, kept in step with the graph",
    "embeddings": "texts to vectors, with the bundled model or an OpenAI-compatible endpoint",
    "graph-embeddings": "stores and searches entity vectors (an entity found by what it means)",
    "document-embeddings": "stores and searches chunk vectors, for Document RAG",
    "text-completion": "the LLM behind an OpenAI-compatible endpoint (TG_LLM_URL), as a service",
    "kg-extract": "extracts facts from each chunk, with the LLM or the offline extractor",
    "chunker": "splits each document (PDFs into pages first) into overlapping chunks",
    "architecture-extract": "reads whole documents for services, owners, dependencies, decisions and incidents",
    "graph-rag": "answers questions from the knowledge graph (GraphRAG), with explain events",
    "search": "hardened GraphRAG: routes each question (facts, community reports, summaries) and answers it",
    "community": "groups each collection's graph into communities and writes their reports",
    "raptor": "builds each collection's RAPTOR tree of passage summaries for search",
    "document-rag": "answers questions from the document chunks (Document RAG), with explain events",
    "agent": "the ReAct agent: thinks, calls tools (GraphRAG, Document RAG, …) and answers",
    "explainability": "stores the explain events of every answer as traces",
    "ping": "answers ping requests: a check that a flow and the bus work",
    "gateway": "the HTTP gateway: REST routes, the WebSocket and the trace viewer",
}


def processor_factory(name: str) -> ProcessorFactory:
    return load(PROCESSORS, name, "processor")


def packaged_blueprints() -> dict[str, str]:
    """Blueprint name -> JSON text, from launch/blueprints/*.json."""
    folder = resources.files("tracegraph.launch") / "blueprints"
    return {entry.name.removesuffix(".json"): entry.read_text(encoding="utf-8")
            for entry in folder.iterdir() if entry.name.endswith(".json")}


def packaged_tools() -> dict[str, str]:
    """Agent tool name -> JSON text, from launch/tools/*.json (each file an object of name -> tool)."""
    folder = resources.files("tracegraph.launch") / "tools"
    tools: dict[str, str] = {}
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".json"):
            tools.update({name: json.dumps(tool) for name, tool in json.loads(entry.read_text(encoding="utf-8")).items()})
    return tools


def packaged_functional_predicates() -> dict[str, str]:
    """Predicate label -> why it holds one value per subject (launch/functional-predicates.json): the
    config service seeds type `functional-predicate` with them on first start."""
    entry = resources.files("tracegraph.launch") / "functional-predicates.json"
    return json.loads(entry.read_text(encoding="utf-8"))


def superseded_blueprints() -> dict[str, list[str]]:
    """Blueprint name -> digests of the versions shipped before the config service recorded which one
    it seeded (launch/superseded-blueprints.json): a data directory holding one of them is upgraded."""
    entry = resources.files("tracegraph.launch") / "superseded-blueprints.json"
    return json.loads(entry.read_text(encoding="utf-8"))


def config_service(backend: Backend, settings: RuntimeSettings) -> Processor:
    """The config service, seeded with the packaged blueprints, agent tools and single-valued predicates
    on first start."""
    from tracegraph.flow.config.processor import ConfigProcessor
    return ConfigProcessor(backend, settings, blueprints=packaged_blueprints, tools=packaged_tools,
                           superseded=superseded_blueprints, functional=packaged_functional_predicates)
