"""Every option and positional of every console script says what it is for in `--help`."""

from __future__ import annotations

import argparse
import importlib
import tomllib
from pathlib import Path

import pytest

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"
SCRIPTS = tomllib.loads(PYPROJECT.read_text())["project"]["scripts"]


class ParserBuilt(Exception):
    """Raised instead of parsing: carries the parser a command built, so that nothing runs."""

    def __init__(self, parser: argparse.ArgumentParser) -> None:
        super().__init__(parser.prog)
        self.parser = parser


def parser_of(entry_point: str, monkeypatch: pytest.MonkeyPatch) -> argparse.ArgumentParser:
    """The ArgumentParser the command's `main` builds, caught at its `parse_args` call."""
    def caught(parser: argparse.ArgumentParser, *args, **kwargs):
        raise ParserBuilt(parser)

    module, _, function = entry_point.partition(":")
    main = getattr(importlib.import_module(module), function)
    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", caught)
    with pytest.raises(ParserBuilt) as built:
        main([])
    return built.value.parser


@pytest.mark.parametrize("command", sorted(SCRIPTS))
def test_every_argument_has_help(command, monkeypatch):
    parser = parser_of(SCRIPTS[command], monkeypatch)
    silent = [action.option_strings[-1] if action.option_strings else action.dest for action in parser._actions
              if not (action.help or "").strip() or action.help == argparse.SUPPRESS]
    assert not silent, f"{command}: no help for {', '.join(silent)}"
    assert parser.prog == command, "the usage line should name the command as the user types it"
