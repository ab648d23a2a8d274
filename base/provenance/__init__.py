"""PROV-O provenance: vocabulary, URI minting and triple builders, as the explainability specs define them."""
