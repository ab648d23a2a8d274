"""Model clients: text completion and embeddings (OpenAI-compatible endpoints, the bundled local model)."""
