"""`tg-processor --help` says what each processor does and shows no bus it refuses; `tg-demo --help`
names every part of the tour."""

from __future__ import annotations

import re

from tracegraph.launch import demo, one
from tracegraph.launch.registry import DESCRIPTIONS, PROCESSORS


def test_every_registered_processor_has_a_description():
    assert DESCRIPTIONS.keys() == PROCESSORS.keys()
    assert all(text.strip() and "\n" not in text for text in DESCRIPTIONS.values())


def test_processor_help_lists_each_processor_with_what_it_does():
    shown = one.parser().format_help()
    listed = shown[shown.index("processors:"):]
    for name, text in DESCRIPTIONS.items():
        line = re.search(rf"^  {re.escape(name)} +(.+)$", listed, re.MULTILINE)
        assert line and text.startswith(line.group(1).strip()), f"{name} is not listed with its description"


def test_processor_help_offers_no_bus_it_refuses():
    shown = one.parser().format_help()
    pubsub = shown[shown.index("  --pubsub "):shown.index("  --pubsub-url")]
    assert "inproc" not in pubsub and "required" in pubsub


def test_demo_help_names_every_part_of_the_tour():
    shown = " ".join(demo.parser().format_help().split())
    for part in ("GraphRAG", "Document RAG", "agent", "community reports", "--point-in-time", "--as-of",
                 "ownership", "dependencies", "institutional memory", "intent check", "explain traces"):
        assert part in shown, part
