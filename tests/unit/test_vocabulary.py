"""The tg: vocabulary in code and the OWL ontology in specs/ontology/ list the same terms."""

from pathlib import Path

import pyoxigraph
import pytest

from tracegraph.base.provenance.vocab import TG

ONTOLOGY = Path(__file__).resolve().parents[2] / "specs" / "ontology" / "tracegraph.ttl"
OWL = "http://www.w3.org/2002/07/owl#"


def declared_terms() -> set[str]:
    store = pyoxigraph.Store()
    store.load(path=str(ONTOLOGY), format=pyoxigraph.RdfFormat.TURTLE)
    kinds = {pyoxigraph.NamedNode(OWL + k) for k in ("Class", "ObjectProperty", "DatatypeProperty")}
    rdf_type = pyoxigraph.NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")
    return {q.subject.value.removeprefix(TG.base) for q in store.quads_for_pattern(None, rdf_type, None)
            if q.object in kinds and q.subject.value.startswith(TG.base)}


def test_every_code_term_is_declared_and_every_declared_term_is_in_code():
    assert TG.terms == declared_terms()


def test_unknown_term_fails_at_once():
    with pytest.raises(AttributeError, match="not a term"):
        TG.queryy
    assert TG.query.iri == "https://trustgraph.ai/ns/query"
