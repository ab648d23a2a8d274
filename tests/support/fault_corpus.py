"""A small corpus of real prose nobody here wrote: the documentation of standard-library modules,
present wherever Python is, so the fault suite needs no data files and no download."""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path

MODULES = ["configparser", "re", "statistics", "wave", "json", "argparse", "shelve", "csv", "cmd", "hashlib",
           "socket", "timeit", "uuid", "heapq", "itertools", "sched"]
LIMIT = 4000  # characters per document: about four chunks each


def module_text(name: str) -> str:
    """The module's docstring, then its public classes' and functions' longer docstrings."""
    module = importlib.import_module(name)
    parts = [inspect.getdoc(module) or ""]
    for attr, obj in sorted(vars(module).items()):
        if attr.startswith("_") or getattr(obj, "__module__", None) != module.__name__:
            continue
        if inspect.isclass(obj) or inspect.isfunction(obj):
            doc = inspect.getdoc(obj) or ""
            if len(doc) > 200:
                parts.append(f"{attr}\n\n{doc}")
    return "\n\n".join(parts)[:LIMIT]


def write_corpus(folder: Path, modules: list[str] = MODULES) -> list[Path]:
    """One text file per module under `folder`; returns their paths."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name in modules:
        path = folder / f"{name}.txt"
        path.write_text(f"The Python {name} module\n\n{module_text(name)}\n", encoding="utf-8")
        paths.append(path)
    return paths
