"""The vocabularies our triples use, as namespaces that refuse unknown terms (a typo fails at once).

`TG` lists every term of specs/ontology/tracegraph.ttl; a unit test keeps the two in step.
"""

from __future__ import annotations

from functools import cache

from tracegraph.schemas.rdf import IriTerm, Triple


class Vocabulary:
    """`TG.query` -> IriTerm("https://trustgraph.ai/ns/query"); `TG.nope` -> AttributeError."""

    def __init__(self, base: str, terms: str) -> None:
        self.base = base
        self.terms = frozenset(terms.split())

    def __getattr__(self, name: str) -> IriTerm:
        if name.startswith("__") or name not in self.terms:
            raise AttributeError(f"{self.base}{name} is not a term of this vocabulary")
        return _iri(self.base + name)

    def __getitem__(self, name: str) -> IriTerm:
        return getattr(self, name)

    def __contains__(self, iri: str) -> bool:
        return iri.startswith(self.base) and iri[len(self.base):] in self.terms


@cache
def _iri(value: str) -> IriTerm:
    return IriTerm(iri=value)


PROV = Vocabulary("http://www.w3.org/ns/prov#", """
    Entity Activity Agent wasDerivedFrom wasGeneratedBy used wasAssociatedWith startedAtTime endedAtTime
""")
RDF = Vocabulary("http://www.w3.org/1999/02/22-rdf-syntax-ns#", "type")
RDFS = Vocabulary("http://www.w3.org/2000/01/rdf-schema#", "label comment")
DC = Vocabulary("http://purl.org/dc/elements/1.1/", "title source date creator")
SCHEMA = Vocabulary("https://schema.org/", "DigitalDocument description keywords name author url")
SKOS = Vocabulary("http://www.w3.org/2004/02/skos/core#", "definition")
XSD = Vocabulary("http://www.w3.org/2001/XMLSchema#", "string integer decimal double boolean dateTime")

TG = Vocabulary("https://trustgraph.ai/ns/", """
    contains pageCount mimeType pageNumber chunkIndex charOffset charLength chunkSize chunkOverlap
    componentVersion llmModel ontology embeddingModel sourceText sourceCharOffset sourceCharLength
    elementTypes tableCount imageCount extractor extractionStatus extractionError
    Document Page Section Chunk Image Subgraph
    query concept entity edgeCount selectedEdge edge reasoning score document chunkCount selectedChunk
    EdgeSelection ChunkSelection Question Grounding Exploration Focus Synthesis Analysis Conclusion
    Decomposition Finding Plan StepResult Answer Reflection Thought Observation ToolUse
    GraphRagQuestion DocRagQuestion AgentQuestion PatternDecision Error
    thought action arguments observation subagentGoal planStep toolCandidate terminationReason
    stepNumber pattern taskType llmDurationMs toolDurationMs toolError inToken outToken
    answer content subTrace
    SearchQuestion StrategyRun queryType retrievalStrategy strategyRun strategy candidateCount durationMs
    cacheHit rawSimilarity hydeSimilarity hydeApplied hypotheticalDocument generatedQuery queryStatus
    rrfK rrfScore reranker confidence sourceDensity lowConfidenceWarning retrievalStrategyUsed evidenceNode
""")


# Names for predicates that usually have no rdfs:label in a collection, as people read them.
READABLE_PREDICATES = {
    "http://www.w3.org/1999/02/22-rdf-syntax-ns#type": "is a",
    "http://www.w3.org/2004/02/skos/core#definition": "is defined as",
    "http://purl.org/dc/elements/1.1/title": "has title",
    "http://www.w3.org/2000/01/rdf-schema#label": "is labelled",
}


# Schema plumbing (labels, RDF/RDFS/OWL axioms): not knowledge to answer or search from; rdf:type is.
PLUMBING_NAMESPACES = ("http://www.w3.org/1999/02/22-rdf-syntax-ns#", "http://www.w3.org/2000/01/rdf-schema#",
                       "http://www.w3.org/2002/07/owl#")


def is_knowledge(t: Triple) -> bool:
    """A fact about the world rather than about the vocabulary."""
    return t.p == RDF.type or not t.p.iri.startswith(PLUMBING_NAMESPACES)
