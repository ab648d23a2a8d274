"""Real text nobody here wrote, in any amount up to ~100k passages, for the scale benchmark: the Python
standard library's docstrings, Debian's /usr/share/doc texts and the public multi-hop samples.

Every source is read lazily in a sorted order, the sources are taken in turn (so any prefix holds all
of them), and a passage whose text was seen before (whitespace aside) is skipped: the same N gives
the same passages on the same machine. Nothing is copied anywhere; the texts are read where they lie.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import importlib
import importlib.util
import inspect
import io
import json
import pkgutil
import re
import sys
import warnings
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

MULTIHOP = Path(__file__).resolve().parents[2] / "shared" / "data" / "multihop"
DEBIAN_DOC = Path("/usr/share/doc")
MIN_CHARS = 120
# Modules whose import has side effects (opens a browser, prints, starts a GUI) or that hold no API
# worth reading (the test suite, the IDE, demos).
UNSAFE_MODULES = frozenset({"antigravity", "this", "idlelib", "turtle", "turtledemo", "tkinter", "test",
                            "lib2to3", "ensurepip", "pydoc_data", "__hello__", "__phello__"})
DEBIAN_FILE = re.compile(r"^(readme|changelog|news|copyright|authors|faq|todo)", re.IGNORECASE)
TEXT_SUFFIXES = frozenset({".txt", ".md", ".rst"})


@dataclass(frozen=True)
class Passage:
    source: str  # stdlib, debian or multihop
    title: str  # qualified name, "package file §n", or the sample passage's title
    subject: str  # what a question about the passage names: "What is {subject}?"
    text: str


# -- the Python standard library ------------------------------------------------------------------

def stdlib_passages(min_chars: int = MIN_CHARS) -> Iterator[Passage]:
    """One passage per module, class, function and method docstring, its qualified name as title."""
    for name in stdlib_module_names():
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")  # deprecated modules warn on import and on attribute access
            try:
                module = importlib.import_module(name)
            except Exception:  # a module missing on this build (tkinter without Tk, msvcrt…) is skipped
                continue
            found = list(_documented(module, name, min_chars))
        yield from found


def stdlib_module_names() -> list[str]:
    """The public standard library modules and their public submodules, sorted."""
    names: set[str] = set()
    for top in sorted(sys.stdlib_module_names):
        if top.startswith("_") or top in UNSAFE_MODULES:
            continue
        names.add(top)
        spec = importlib.util.find_spec(top)
        if spec is not None and spec.submodule_search_locations:
            for info in pkgutil.walk_packages(spec.submodule_search_locations, top + ".", onerror=lambda _: None):
                if not any(part.startswith("_") or part in UNSAFE_MODULES for part in info.name.split(".")[1:]):
                    names.add(info.name)
    return sorted(names)


def _documented(module: object, name: str, min_chars: int) -> Iterator[Passage]:
    yield from _passage("stdlib", name, name, module.__doc__, min_chars)
    for member_name, member in sorted(vars(module).items()):
        if member_name.startswith("_") or getattr(member, "__module__", None) != name:
            continue
        if inspect.isclass(member):
            yield from _passage("stdlib", f"{name}.{member_name}", member_name, member.__doc__, min_chars)
            for method_name, method in sorted(vars(member).items()):
                if not method_name.startswith("_") and inspect.isroutine(method):
                    yield from _passage("stdlib", f"{name}.{member_name}.{method_name}",
                                        f"{member_name}.{method_name}", method.__doc__, min_chars)
        elif inspect.isroutine(member):
            yield from _passage("stdlib", f"{name}.{member_name}", member_name, member.__doc__, min_chars)


def _passage(source: str, title: str, subject: str, doc: object, min_chars: int) -> Iterator[Passage]:
    if isinstance(doc, str):
        text = inspect.cleandoc(doc)
        if len(text) >= min_chars:
            yield Passage(source, title, subject, text)


# -- Debian's package documentation ---------------------------------------------------------------

def debian_passages(root: Path = DEBIAN_DOC, min_chars: int = MIN_CHARS) -> Iterator[Passage]:
    """One passage per paragraph of each package's READMEs, changelogs, NEWS, copyright files and
    plain-text documents (gzipped or not), the package being the top folder under /usr/share/doc."""
    if not root.is_dir():
        return
    for file in sorted(f for f in root.rglob("*") if is_debian_text(f)):
        package = file.relative_to(root).parts[0]
        name = str(file.relative_to(root / package))
        for number, paragraph in enumerate(re.split(r"\n\s*\n", _read_text(file)), 1):
            paragraph = paragraph.strip()
            if len(paragraph) >= min_chars:
                yield Passage("debian", f"{package} {name} §{number}", package, paragraph)


def is_debian_text(file: Path) -> bool:
    name = file.name.removesuffix(".gz")
    return (file.is_file() and not file.is_symlink()
            and (DEBIAN_FILE.match(name) is not None or Path(name).suffix.lower() in TEXT_SUFFIXES))


def _read_text(file: Path) -> str:
    try:
        raw = gzip.decompress(file.read_bytes()) if file.suffix == ".gz" else file.read_bytes()
    except (OSError, EOFError, gzip.BadGzipFile):
        return ""
    return raw.decode("utf-8", errors="replace")


# -- the public multi-hop samples -----------------------------------------------------------------

def multihop_passages(folder: Path = MULTIHOP, min_chars: int = MIN_CHARS) -> Iterator[Passage]:
    """The samples' passages (Wikipedia paragraphs), in file order then corpus order."""
    for file in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        for item in json.loads(file.read_text(encoding="utf-8")).get("corpus", []):
            if len(item.get("text", "")) >= min_chars:
                yield Passage("multihop", item["title"], item["title"], item["text"])


# -- together ---------------------------------------------------------------------------------------

def default_sources(min_chars: int = MIN_CHARS) -> list[Iterator[Passage]]:
    return [multihop_passages(min_chars=min_chars), stdlib_passages(min_chars), debian_passages(min_chars=min_chars)]


def build(count: int, sources: Iterable[Iterator[Passage]] | None = None) -> list[Passage]:
    """The first `count` distinct passages, taking the sources in turn until each runs dry."""
    pending = list(default_sources() if sources is None else sources)
    seen: set[bytes] = set()
    chosen: list[Passage] = []
    while pending and len(chosen) < count:
        for source in list(pending):
            passage = next((p for p in source if _key(p.text) not in seen), None)
            if passage is None:
                pending.remove(source)
                continue
            seen.add(_key(passage.text))
            chosen.append(passage)
            if len(chosen) == count:
                break
    return chosen


def _key(text: str) -> bytes:
    return hashlib.blake2b(" ".join(text.split()).encode(), digest_size=16).digest()


def counts(passages: Iterable[Passage]) -> dict[str, int]:
    return dict(sorted(Counter(p.source for p in passages).items()))


if __name__ == "__main__":
    wanted = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    built = build(wanted)
    print(f"{len(built)} passages: {counts(built)}")
