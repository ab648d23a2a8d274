"""Which files a load takes, from its FILE and DIR arguments, and for each its kind and its path: the
document's identity in the library, relative to the folder it was loaded from (forward slashes)."""

from __future__ import annotations

import mimetypes
import os
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from tracegraph.base.documents import CODEOWNERS, KINDS as DOCUMENT_KINDS, PDF
from tracegraph.base.errors import ConfigError

MARKDOWN_SUFFIXES = {"md", "markdown"}
TEXT_SUFFIXES = {"txt", "text", "rst", "adoc", "json", "toml", "cfg", "ini", "log", "yml", "yaml"}
NAMED_KINDS = {"CODEOWNERS": CODEOWNERS}  # files known by their name, not a suffix
# Hidden folders are skipped, but these are where GitHub and GitLab look for a CODEOWNERS file.
HIDDEN_CODEOWNERS = (".github", ".gitlab")
SHOWN_SKIPPED = 10


def kind_from_name(name: str) -> str | None:
    """The document kind a file's name tells, or None: Markdown when any suffix is .md or .markdown
    (a template such as `x.html.md.erb` is Markdown), text for common text suffixes, PDF, CODEOWNERS.

    >>> [kind_from_name(n) for n in ("x.html.md.erb", "values.YAML", "CODEOWNERS", "a.pdf", "logo.png", "Makefile")]
    ['text/markdown', 'text/plain', 'text/x-codeowners', 'application/pdf', None, None]
    """
    if name in NAMED_KINDS:
        return NAMED_KINDS[name]
    suffixes = name.lstrip(".").lower().split(".")[1:]
    if MARKDOWN_SUFFIXES.intersection(suffixes):
        return "text/markdown"
    if suffixes and suffixes[-1] in TEXT_SUFFIXES:
        return "text/plain"
    if suffixes and suffixes[-1] == "pdf":
        return PDF
    return None


def kind_of(file: Path, given: str | None = None) -> str:
    """The kind of a file the user named: `given`, else its name's kind, else what `mimetypes` guesses
    (for a named file only, never in a folder walk: its guesses differ from machine to machine)."""
    kind = given or kind_from_name(file.name) or mimetypes.guess_type(file.name)[0]
    if kind not in DOCUMENT_KINDS:
        raise ConfigError(f"{file}: cannot tell the document kind from {file.suffix or file.name!r}; pass --kind, "
                          f"one of {', '.join(sorted(DOCUMENT_KINDS))}")
    return kind


def short_kind(kind: str) -> str:
    """The name a user may give for a kind on the command line.

    >>> [short_kind(k) for k in ("text/plain", "text/markdown", "text/x-adr", "text/x-postmortem")]
    ['plain', 'markdown', 'adr', 'postmortem']
    """
    return kind.rsplit("/", 1)[-1].removeprefix("x-")


def declared_kind(text: str, kinds: Collection[str]) -> str:
    """The kind `--kind TEXT` declares, given in full (`text/x-adr`) or short (`adr`), if it is one of
    `kinds`; else a one-line ConfigError listing them."""
    for kind in kinds:
        if text.strip().lower() in (kind, short_kind(kind)):
            return kind
    raise ConfigError(f"--kind {text!r} is not a kind this command takes; give one of "
                      f"{', '.join(sorted(short_kind(k) for k in kinds))} (or in full: {_kinds(kinds)})")


def path_of(file: Path) -> str:
    """A named file's path in the library: the path as given when it is relative, else its name.

    >>> path_of(Path("./docs//guide.md")), path_of(Path("/home/me/notes.md"))
    ('docs/guide.md', 'notes.md')
    """
    return file.as_posix() if not file.is_absolute() else file.name


def given_path(text: str) -> str:
    """A path given with --path, in the library's form (forward slashes, no leading `./` or `/`).

    >>> given_path("./services\\\\billing/README.md"), given_path("/notes.md")
    ('services/billing/README.md', 'notes.md')
    """
    path = PurePosixPath(text.strip().replace("\\", "/")).as_posix().lstrip("/")
    if path in ("", "."):
        raise ConfigError(f"--path {text!r} is empty: give the file's path, such as docs/guide.md")
    return path


@dataclass(frozen=True, slots=True)
class DocumentFile:
    file: Path  # where to read it
    path: str  # its identity in the library
    kind: str


@dataclass(frozen=True, slots=True)
class Selection:
    files: list[DocumentFile]
    skipped: list[str]  # files found in folders that the command cannot take (or that are empty)

    def skipped_line(self, prog: str) -> str:
        """The one summary line of what was skipped ("" when nothing was)."""
        if not self.skipped:
            return ""
        names = ", ".join(self.skipped[:SHOWN_SKIPPED])
        more = f" and {len(self.skipped) - SHOWN_SKIPPED} more" if len(self.skipped) > SHOWN_SKIPPED else ""
        return f"skipped {len(self.skipped)} file(s) {prog} cannot take: {names}{more}"


def select(arguments: Sequence[Path], kinds: Collection[str], prog: str, path: str | None = None,
           declared: str | None = None) -> Selection:
    """The files to load, in order, each with its path and kind. A DIR is walked (sorted, hidden entries
    skipped, files of other kinds or empty ones listed in `skipped`); a FILE must be of one of `kinds`.
    `path` (--path) names the path of a single FILE. `declared` (--kind, one of `kinds`) is the kind of
    every file taken, and lets a FILE whose name tells no kind in. Raises ConfigError, in one line, for what
    cannot be loaded: a missing or unreadable file, a folder with nothing to load, two files with one path."""
    if path is not None and (len(arguments) != 1 or arguments[0].is_dir()):
        what = f"{arguments[0]} is a directory" if len(arguments) == 1 else f"{len(arguments)} were given"
        raise ConfigError(f"--path names the path of one file; {what} (a folder's files are named by their "
                          "paths relative to it)")
    files: list[DocumentFile] = []
    skipped: list[str] = []
    for argument in arguments:
        if argument.is_dir():
            found, others = _walk(argument, kinds, declared)
            if not found:
                raise ConfigError(f"{argument}: no file {prog} can take in this folder ({_kinds(kinds)})"
                                  + (f"; {len(others)} other file(s) in it" if others else ""))
            files += found
            skipped += others
        elif argument.exists() or argument.is_symlink():
            kind = declared or kind_from_name(argument.name) or mimetypes.guess_type(argument.name)[0]
            if kind not in kinds:
                raise ConfigError(f"{argument}: {prog} takes {_kinds(kinds)} files, " + (
                    f"not {kind}" if kind else "and cannot tell this one's kind from its name")
                    + ("; declare it with --kind" if len(kinds) > 1 else ""))
            _check_readable(argument)
            files.append(DocumentFile(argument, given_path(path) if path is not None else path_of(argument), kind))
        else:
            raise ConfigError(f"cannot read {argument}: No such file or directory")
    return Selection(_unique(files), skipped)


def _walk(folder: Path, kinds: Collection[str], declared: str | None) -> tuple[list[DocumentFile], list[str]]:
    found: list[DocumentFile] = []
    others: list[str] = []
    for root, dirs, names in os.walk(folder):
        here = Path(root)
        hidden = [d for d in dirs if d.startswith(".")]
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        extra = [f"{d}/CODEOWNERS" for d in sorted(hidden)
                 if d in HIDDEN_CODEOWNERS and (here / d / "CODEOWNERS").is_file()]
        for name in sorted(n for n in names if not n.startswith(".")) + extra:
            file = here / name
            relative = file.relative_to(folder).as_posix()
            kind = kind_from_name(file.name)
            if kind not in kinds:
                others.append(relative)
                continue
            _check_readable(file)
            if file.stat().st_size == 0:
                others.append(f"{relative} (empty)")
                continue
            found.append(DocumentFile(file, relative, declared or kind))
    return found, others


def _check_readable(file: Path) -> None:
    try:
        with open(file, "rb"):
            pass
    except OSError as exc:
        raise ConfigError(f"cannot read {file}: {exc.strerror or exc}") from None


def _unique(files: list[DocumentFile]) -> list[DocumentFile]:
    """Each file once; two files with one path would replace each other, so that is refused."""
    seen: dict[str, Path] = {}
    unique = []
    for f in files:
        if f.path in seen:
            if seen[f.path].resolve() != f.file.resolve():
                raise ConfigError(f"{seen[f.path]} and {f.file} would both be stored as {f.path!r}: load them from "
                                  "their common folder, or one at a time with --path")
            continue
        seen[f.path] = f.file
        unique.append(f)
    return unique


def _kinds(kinds: Collection[str]) -> str:
    return ", ".join(sorted(kinds))
