"""Usage errors of every `tg-*` command: one `prog: error: …` line on stderr and exit status 2.

argparse prints its whole usage block before the error; for commands with twenty flags that
block buries the one line that says what was wrong, so these parsers print that line alone
(`prog --help` still shows the usage)."""

from __future__ import annotations

import argparse
from typing import NoReturn


class ArgumentParser(argparse.ArgumentParser):
    """argparse's parser, whose errors (a bad flag value, an unknown choice) are one line."""

    def error(self, message: str) -> NoReturn:
        usage_error(self, message)


def usage_error(parser: argparse.ArgumentParser, text: str) -> NoReturn:
    """argparse's convention without the usage block: `prog: error: text` on stderr, exit status 2."""
    parser.exit(2, f"{parser.prog}: error: {text}\n")
