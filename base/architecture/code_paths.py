"""Where a service's code lives, read from text that says so ("Skyline's code lives in services/skyline/"):
what links a CODEOWNERS pattern to the services it covers."""

from __future__ import annotations

import re
from dataclasses import dataclass

_NAME = r"(?P<name>(?:[A-Z][\w&.-]*)(?:\s+(?:[A-Z][\w&.-]*|of|and|de|for))*?)"
_PATH = r"`?(?P<path>/?[\w.-]+(?:/[\w.*-]+)*/?)`?"
_PATTERNS = [re.compile(p) for p in (
    # Skyline's code lives in services/skyline/ · The Demand Feed's source is in `services/demand-feed`
    rf"(?:\b[Tt]he\s+)?{_NAME}(?:'s|’s)\s+(?:source\s+)?(?:code|source|repository|sources)\s+"
    rf"(?:lives|is|sits|resides|is kept|is stored)\s+(?:in|under|at)\s+(?:the\s+)?{_PATH}",
    # The code of Skyline lives in services/skyline/
    rf"\b[Tt]he\s+(?:source\s+)?code\s+(?:of|for)\s+(?:the\s+)?{_NAME}\s+(?:lives|is|sits|resides|is kept)\s+"
    rf"(?:in|under|at)\s+(?:the\s+)?{_PATH}",
    # Skyline lives in the services/skyline/ directory · Skyline is built from services/skyline
    rf"(?:\b[Tt]he\s+)?{_NAME}\s+(?:lives|is built from|is implemented in)\s+(?:in\s+|under\s+)?(?:the\s+)?{_PATH}"
    r"(?:\s+(?:directory|folder))?",
)]


@dataclass(frozen=True, slots=True)
class CodePath:
    line: int  # 1-based
    name: str  # the entity as the text names it
    path: str  # a repository path, without a leading "/", directories ending in "/"


def code_paths(text: str) -> list[CodePath]:
    """Every statement of where a named thing's code lives, in order.

    >>> [(c.name, c.path) for c in code_paths("Skyline's code lives in services/skyline/.\\n"
    ...                                         "The Demand Feed's code lives in `services/demand-feed`.")]
    [('Skyline', 'services/skyline/'), ('Demand Feed', 'services/demand-feed/')]
    """
    found: list[CodePath] = []
    for number, line in enumerate(text.splitlines(), start=1):
        for pattern in _PATTERNS:
            for match in pattern.finditer(line):
                path = _normal(match["path"])
                if "/" in path.rstrip("/") or path.endswith("/"):
                    found.append(CodePath(number, match["name"].strip(), path))
    return list({(c.name, c.path): c for c in found}.values())


def _normal(path: str) -> str:
    """A path as CODEOWNERS patterns are matched against it: no leading "/", no trailing dot of the
    sentence, a directory ending in "/" (a name without an extension is taken for a directory)."""
    path = path.lstrip("/").rstrip(".")
    last = path.rstrip("/").rsplit("/", 1)[-1]
    return path if path.endswith("/") or "." in last else path + "/"
