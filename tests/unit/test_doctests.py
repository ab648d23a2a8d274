"""Doctests of small pure helpers, run as ordinary tests."""

import doctest

import pytest

import tracegraph.base.bus.protocol
import tracegraph.base.bus.topic
import tracegraph.cli._client
import tracegraph.cli.start_flow
import tracegraph.flow.gateway.app
import tracegraph.flow.graph_rag.focus
import tracegraph.cli.explain_render


@pytest.mark.parametrize("module", [tracegraph.base.bus.protocol, tracegraph.base.bus.topic, tracegraph.cli._client, tracegraph.cli.start_flow,
                                    tracegraph.flow.gateway.app, tracegraph.flow.graph_rag.focus,
                                    tracegraph.cli.explain_render])
def test_doctests(module):
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0
