"""Fixtures the unit suites share."""

import pytest

from tracegraph.base.llm.local_embed import LocalEmbedder


@pytest.fixture(scope="session")
def embedder() -> LocalEmbedder:
    """The bundled embedding model, loaded once for every pipeline test (it loads on first use)."""
    return LocalEmbedder()
