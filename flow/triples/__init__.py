"""Triples store processor: writes quads, answers pattern and SPARQL queries, removes documents."""
