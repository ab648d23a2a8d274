"""The search service: hardened GraphRAG retrieval (routing, hybrid fusion, HyDE, graph walks, NL→SPARQL)."""
