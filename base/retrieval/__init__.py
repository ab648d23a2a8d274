"""Hardened retrieval building blocks shared by the search service and its benchmark."""
