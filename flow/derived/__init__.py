"""Structures derived from a collection's graph and kept current: communities and the RAPTOR tree."""
