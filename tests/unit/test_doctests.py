"""Doctests of small pure helpers, run as ordinary tests."""

import doctest

import pytest

import tracegraph.base.bus.topic
import tracegraph.cli._client
import tracegraph.cli.start_flow


@pytest.mark.parametrize("module", [tracegraph.base.bus.topic, tracegraph.cli._client, tracegraph.cli.start_flow])
def test_doctests(module):
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0
