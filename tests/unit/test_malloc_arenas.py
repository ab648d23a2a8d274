"""The launchers cap glibc's malloc arenas (launch/process.py): each worker thread would otherwise
fragment an arena of its own, and a long-running stack grew without levelling off (bench/soak.py)."""

from __future__ import annotations

import platform

import pytest

from tracegraph.launch.process import limit_malloc_arenas


def test_an_arena_limit_in_the_environment_wins(monkeypatch):
    monkeypatch.setenv("MALLOC_ARENA_MAX", "4")
    assert limit_malloc_arenas() is False


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="mallopt's arena cap is glibc's")
def test_arenas_are_capped_on_glibc(monkeypatch):
    monkeypatch.delenv("MALLOC_ARENA_MAX", raising=False)
    assert limit_malloc_arenas() is True
