"""GraphRAG: answers from the knowledge graph, with a PROV-O explanation of every step."""
