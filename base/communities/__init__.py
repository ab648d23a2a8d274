"""Hierarchical Leiden communities over the knowledge graph, their reports and their RDF form (no I/O)."""
