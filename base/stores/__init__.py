"""Storage: Protocols for triples, vectors and blobs, with an embedded engine and a scale-out engine each."""
