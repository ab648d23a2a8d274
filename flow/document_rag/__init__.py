"""Document RAG: nearest chunks → answer, explained in PROV-O."""
