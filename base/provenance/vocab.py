"""The vocabularies our triples use, as namespaces that refuse unknown terms (a typo fails at once).

`TG` lists every term of specs/ontology/tracegraph.ttl; a unit test keeps the two in step. `is_knowledge`
is the one rule for which triples are facts about the world (and so evidence, indexed, walked).
"""

from __future__ import annotations

from functools import cache

from tracegraph.base.provenance.uris import TRUSTGRAPH_BASE
from tracegraph.schemas.rdf import IriTerm, Triple, TripleTerm


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
    wasAttributedTo
""")
RDF = Vocabulary("http://www.w3.org/1999/02/22-rdf-syntax-ns#", "type reifies")
RDFS = Vocabulary("http://www.w3.org/2000/01/rdf-schema#", "label comment")
DC = Vocabulary("http://purl.org/dc/elements/1.1/", "title source date creator")
SCHEMA = Vocabulary("https://schema.org/", "DigitalDocument description keywords name author url")
SKOS = Vocabulary("http://www.w3.org/2004/02/skos/core#", "definition")
XSD = Vocabulary("http://www.w3.org/2001/XMLSchema#", "string integer decimal double boolean dateTime")

TG = Vocabulary("https://trustgraph.ai/ns/", """
    contains pageCount mimeType pageNumber chunkIndex charOffset charLength chunkSize chunkOverlap
    componentVersion llmModel ontology embeddingModel sourceText sourceCharOffset sourceCharLength
    elementTypes tableCount imageCount extractor extractionStatus extractionError indexingError
    removedAt refusedMention
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
    rrfK rrfScore reranker confidence sourceDensity lowConfidenceWarning lowConfidenceReason retrievalStrategyUsed evidenceNode
    PprSeed pprSeed seedNode seedWeight pprScore chunkSelection chunk rank mentions
    Community CommunityReport CommunityDetection level member memberCount parentCommunity reportOf summary
    rating ratingReason keyEntity method embedding resolution seed algorithm factCount entityCount
    graphFingerprint detectionMode modularity RaptorNode RaptorBuild childNode passageCount
    GlobalQuestion RaptorQuestion ReportScore ReportSelection TreeVisit NodeSelection reportScore
    selectedReport report community mapScore treeVisit node expanded selectedNode threshold
    RiskSelection selectedRisk riskKind severity riskEntity evidence
    NothingFound
    FactRecord recordedAt retractedAt validFrom validUntil statedIn supersededBy supersededAt extractionConfidence
    ReviewItem reviewStatus queuedAt reviewedAt reviewReason extractionSubgraph reviewedItem
    asOf knownAt stalenessWeight halfLifeDays supersededValue
    DatePhrase datePhrase phraseText windowStart windowEnd resolvedAsOf resolvedBy anchorRecord appliedAsOf
    CodeOwnersRule Team Person SourceLine Decision FailurePattern PolicyException Memory
    Service Datastore Library Platform firstLine lastLine phrase consideredOption
    pathPattern codeOwner contactHandle codePath lineNumber
    why causedBy affected excepts concerns decisionStatus rationale consequence rootCause impact actionItem policy decisionDriver chosenOption
""")


# Names for predicates that usually have no rdfs:label in a collection, as people read them.
READABLE_PREDICATES = {
    "http://www.w3.org/1999/02/22-rdf-syntax-ns#type": "is a",
    "http://www.w3.org/2004/02/skos/core#definition": "is defined as",
    "http://purl.org/dc/elements/1.1/title": "has title",
    "http://www.w3.org/2000/01/rdf-schema#label": "is labelled",
    TG.base + "codeOwner": "names as code owner",
    TG.base + "why": "was decided about",
    TG.base + "affected": "affected",
    TG.base + "causedBy": "was caused by",
    TG.base + "excepts": "grants an exception to",
    TG.base + "concerns": "concerns",
}


OWL = "http://www.w3.org/2002/07/owl#"
DCTERMS = "http://purl.org/dc/terms/"


# What is never knowledge, and why. A fact about the world is what a question may be answered from,
# what the keyword index indexes and what GraphRAG walks over; everything below describes our
# vocabulary, our library or our pipeline instead. `is_knowledge` reads these tables and nothing else.

# Predicates in these namespaces (rdf:type excepted: it is judged by its class, below).
NOT_KNOWLEDGE_NAMESPACES: dict[str, str] = {
    RDF.base: "RDF plumbing (lists, reification, rdf:value)",
    RDFS.base: "labels, comments and schema axioms: how things are named and typed, not what is so",
    OWL: "ontology axioms",
    DC.base: "Dublin Core: a library document's title, date, source and creator",
    DCTERMS: "DCMI terms: the same kind of document description",
    PROV.base: "PROV-O: where a fact came from, not the fact",
    TG.base: "our own plumbing: tg:contains, tg:mimeType, tg:pageCount and every trace term",
}

# Single predicates outside those namespaces.
NOT_KNOWLEDGE_PREDICATES: dict[str, str] = {
    SCHEMA[name].iri: "schema.org description of a library document (upstream's DigitalDocument metadata)"
    for name in ("name", "description", "keywords", "author", "url")
}

# `rdf:type` to a class in these namespaces says what kind of record a node is, not what it is in the world.
NOT_KNOWLEDGE_CLASS_NAMESPACES: dict[str, str] = {
    PROV.base: "provenance records: prov:Entity, prov:Activity, prov:Agent",
    TG.base: "library and trace records: tg:Document, tg:Chunk, tg:Subgraph, tg:Question …",
    RDF.base: "vocabulary declarations (rdf:Property)",
    RDFS.base: "vocabulary declarations (rdfs:Class)",
    OWL: "vocabulary declarations (owl:Class, owl:ObjectProperty)",
}

NOT_KNOWLEDGE_CLASSES: dict[str, str] = {
    SCHEMA.DigitalDocument.iri: "a library document, as upstream types it",
}

# Subjects that are our own records: nothing said about them is a fact about the world. A quoted
# triple as subject (`<< s p o >> tg:score …`) is a statement about a statement, and is left out too.
NOT_KNOWLEDGE_SUBJECTS: dict[str, str] = {
    "urn:chunk:": "a chunk of a document",
    "urn:page:": "a page of a document",
    "urn:trustgraph:": "library documents (urn:trustgraph:doc:…) and query-time trace nodes",
    "urn:graph:": "a named graph (urn:graph:source, urn:graph:retrieval)",
    TRUSTGRAPH_BASE + "/subgraph/": "an extraction's subgraph",
    TRUSTGRAPH_BASE + "/activity/": "a provenance activity",
    TRUSTGRAPH_BASE + "/agent/": "a provenance agent (one of our components)",
}

_NAMESPACES = tuple(NOT_KNOWLEDGE_NAMESPACES)
_PREDICATES = frozenset(NOT_KNOWLEDGE_PREDICATES)
_CLASS_NAMESPACES = tuple(NOT_KNOWLEDGE_CLASS_NAMESPACES)
_CLASSES = frozenset(NOT_KNOWLEDGE_CLASSES)
_SUBJECTS = tuple(NOT_KNOWLEDGE_SUBJECTS)


def is_knowledge_predicate(predicate: str) -> bool:
    """Whether a predicate IRI can state knowledge at all (rdf:type can, depending on its class).

    >>> is_knowledge_predicate("https://trustgraph.ai/r/depends-on"), is_knowledge_predicate(DC.title.iri)
    (True, False)
    """
    return predicate == RDF.type.iri or not (predicate in _PREDICATES or predicate.startswith(_NAMESPACES))


def is_knowledge_class(cls: str) -> bool:
    """Whether membership of a class is knowledge: a domain class, not a record kind or a vocabulary one.

    >>> is_knowledge_class("https://trustgraph.ai/e/Company"), is_knowledge_class(TG.Document.iri)
    (True, False)
    """
    return not (cls in _CLASSES or cls.startswith(_CLASS_NAMESPACES))


def is_provenance_node(value: str) -> bool:
    """Whether an IRI names one of our own records (a document, chunk, page, subgraph, trace node…).

    >>> is_provenance_node("urn:chunk:1"), is_provenance_node("https://trustgraph.ai/e/helios-grid")
    (True, False)
    """
    return value.startswith(_SUBJECTS)


def is_knowledge(t: Triple) -> bool:
    """A fact about the world, rather than about our vocabulary, our library or our pipeline.

    Domain facts, their types and the extractor's definitions are knowledge:

    >>> from tracegraph.schemas.rdf import iri, literal, quoted
    >>> helios, e = iri("https://trustgraph.ai/e/helios-grid"), "https://trustgraph.ai/e/"
    >>> is_knowledge(Triple(s=helios, p=iri("https://trustgraph.ai/r/depends-on"), o=iri(e + "corvid")))
    True
    >>> is_knowledge(Triple(s=helios, p=RDF.type, o=iri(e + "Company")))
    True
    >>> is_knowledge(Triple(s=helios, p=SKOS.definition, o=literal("a grid operator")))
    True

    A document's description, provenance, labels and trace records are not:

    >>> doc = iri("https://example.org/b-boy")
    >>> [is_knowledge(Triple(s=doc, p=p, o=o)) for p, o in [
    ...     (DC.title, literal("B Boy (song)")), (TG.mimeType, literal("text/plain")),
    ...     (RDF.type, TG.Document), (RDF.type, PROV.Entity), (RDF.type, SCHEMA.DigitalDocument),
    ...     (PROV.wasDerivedFrom, doc), (RDFS.label, literal("B Boy (song)")), (SCHEMA.url, doc)]]
    [False, False, False, False, False, False, False, False]
    >>> is_knowledge(Triple(s=iri("urn:chunk:1"), p=iri("https://trustgraph.ai/r/mentions"), o=helios))
    False
    >>> is_knowledge(Triple(s=quoted(helios, RDF.type, helios), p=iri("https://trustgraph.ai/r/said"), o=helios))
    False
    """
    s = t.s
    if isinstance(s, TripleTerm) or (isinstance(s, IriTerm) and is_provenance_node(s.iri)):
        return False
    if t.p.iri == RDF.type.iri:
        return not isinstance(t.o, IriTerm) or is_knowledge_class(t.o.iri)
    return is_knowledge_predicate(t.p.iri)
