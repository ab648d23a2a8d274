"""Which predicates hold one value per subject: config type `functional-predicate`, one key per
predicate (its label as the extractor writes it, like `owned by`, or a full IRI), value a note."""

from __future__ import annotations

from collections.abc import Mapping

from tracegraph.base.provenance.uris import relation_uri

CONFIG_TYPE = "functional-predicate"


def predicate_iri(key: str) -> str:
    """>>> predicate_iri("Owned by"), predicate_iri("https://schema.org/owner")
    ('https://trustgraph.ai/r/owned-by', 'https://schema.org/owner')
    """
    return key if key.startswith(("http://", "https://", "urn:")) else relation_uri(key)


def functional_predicates(config: Mapping[str, Mapping[str, str]]) -> frozenset[str]:
    return frozenset(predicate_iri(key) for key in config.get(CONFIG_TYPE, {}))
