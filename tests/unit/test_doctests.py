"""Doctests of small pure helpers, run as ordinary tests."""

import doctest

import pytest

import tracegraph.base.bus.protocol
import tracegraph.base.bus.topic
import tracegraph.cli._client
import tracegraph.cli.document_files
import tracegraph.cli.start_flow
import tracegraph.flow.gateway.app
import tracegraph.flow.graph_rag.focus
import tracegraph.cli.explain_render
import tracegraph.cli.trace_store
import tracegraph.flow.gateway.auth
import tracegraph.flow.gateway.tenancy
import tracegraph.cli.socket_client
import tracegraph.base.retrieval.confidence
import tracegraph.base.retrieval.fusion
import tracegraph.base.retrieval.relations
import tracegraph.base.retrieval.rerank
import tracegraph.base.retrieval.router
import tracegraph.flow.search.weights
import tracegraph.flow.search.pipeline
import tracegraph.base.retrieval.names
import tracegraph.base.provenance.query
import tracegraph.base.provenance.agent
import tracegraph.base.retrieval.distinct_lines
import tracegraph.base.retrieval.global_map
import tracegraph.base.stores.keyword
import tracegraph.base.architecture.code_paths
import tracegraph.flow.search.architecture_answers
import tracegraph.base.architecture.codeowners
import tracegraph.base.architecture.codeowners_index
import tracegraph.base.architecture.markdown_document
import tracegraph.base.architecture.memory_docs
import tracegraph.base.extraction.names
import tracegraph.base.extraction.vocabulary
import tracegraph.base.temporal.dates
import tracegraph.cli.architecture
import tracegraph.flow.graph_rag.text_passages


@pytest.mark.parametrize("module", [tracegraph.flow.search.architecture_answers, tracegraph.base.architecture.code_paths, tracegraph.base.architecture.codeowners,
                                    tracegraph.base.architecture.codeowners_index,
                                    tracegraph.base.architecture.markdown_document,
                                    tracegraph.base.architecture.memory_docs, tracegraph.base.bus.protocol, tracegraph.base.bus.topic, tracegraph.cli._client, tracegraph.cli.document_files, tracegraph.cli.start_flow,
                                    tracegraph.flow.gateway.app, tracegraph.flow.graph_rag.focus,
                                    tracegraph.cli.explain_render, tracegraph.cli.trace_store,
                                    tracegraph.flow.gateway.auth, tracegraph.flow.gateway.tenancy,
                                    tracegraph.cli.socket_client, tracegraph.base.retrieval.confidence,
                                    tracegraph.base.retrieval.fusion, tracegraph.base.retrieval.relations,
                                    tracegraph.base.retrieval.rerank,
                                    tracegraph.base.retrieval.router, tracegraph.flow.search.weights,
                                    tracegraph.flow.search.pipeline, tracegraph.base.retrieval.names,
                                    tracegraph.base.provenance.query, tracegraph.base.provenance.agent,
                                    tracegraph.base.retrieval.global_map, tracegraph.base.stores.keyword,
                                    tracegraph.base.retrieval.distinct_lines, tracegraph.base.extraction.names,
                                    tracegraph.base.extraction.vocabulary, tracegraph.base.temporal.dates,
                                    tracegraph.cli.architecture, tracegraph.flow.graph_rag.text_passages])
def test_doctests(module):
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0
