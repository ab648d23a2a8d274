"""Where each loaded document stands while `--wait` follows it: still going, done, or failed, and
the one line that tells the user so. Polling lives in library_upload; this holds the rules."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

STABLE_POLLS = 2  # all chunks extracted on this many polls in a row: the chunk count has stopped growing too


@dataclass
class DocumentState:
    """One document's progress (chunk records, chunks with a subgraph) and the failures recorded for it:
    (chunk, reason), or (the document itself, reason) when a processor gave up before any chunk existed."""

    document: str
    chunks: int = 0
    done: int = 0
    stable: int = 0
    failures: list[tuple[str, str]] = field(default_factory=list)

    def observe(self, chunks: int, done: int) -> None:
        """A poll's counts; a change in the chunk count starts the stability count again."""
        same = chunks == self.chunks
        self.chunks, self.done = chunks, done
        self.stable = 0 if not self.complete else self.stable + 1 if same else 1

    @property
    def complete(self) -> bool:
        return self.chunks > 0 and self.done >= self.chunks

    @property
    def gave_up_on_document(self) -> bool:
        """A processor recorded that it gave up on the document as a whole (no chunks will come)."""
        return any(subject == self.document for subject, _ in self.failures)

    @property
    def settled(self) -> bool:
        return self.stable >= STABLE_POLLS or self.gave_up_on_document

    @property
    def failed(self) -> bool:
        return bool(self.failures)

    def line(self, names: Mapping[str, str] | None = None) -> str:
        """What became of the document, in one line, named by its path when `names` has one."""
        name = (names or {}).get(self.document)
        label = f"{name} ({self.document})" if name and name != self.document else self.document
        if self.failed:
            chunk_failures = [reason for subject, reason in self.failures if subject != self.document]
            whole = [reason for subject, reason in self.failures if subject == self.document]
            reason = whole[0] if whole else (f"{len(chunk_failures)} of {self.chunks} chunk(s) not fully processed: "
                                             f"{chunk_failures[0]}")
            return f"failed: {label}: {reason}"
        if not self.settled:
            so_far = f"{self.done} of {self.chunks} chunk(s) extracted" if self.chunks else "no chunk records yet"
            return f"not finished: {label}: {so_far}"
        return f"done: {label}: {self.chunks} chunk(s)"


@dataclass
class Settlement:
    """Every document's final state, and whether the wait ran out of time."""

    documents: list[DocumentState]
    timed_out: bool

    @property
    def chunks(self) -> int:
        return sum(state.chunks for state in self.documents)

    @property
    def failed(self) -> list[DocumentState]:
        return [state for state in self.documents if state.failed]

    @property
    def unsettled(self) -> list[DocumentState]:
        return [state for state in self.documents if not state.settled]

    @property
    def indexable_chunks(self) -> int:
        """Chunks whose vectors should be indexed: all but those an indexer recorded giving up on."""
        unindexed = {subject for state in self.documents for subject, reason in state.failures
                     if subject != state.document and not reason.startswith("kg-extract: ")}
        return self.chunks - len(unindexed)

    @property
    def ok(self) -> bool:
        return not self.failed and not self.unsettled

    def unsettled_summary(self, names: Mapping[str, str] | None = None) -> str:
        """The documents still going, for an error message."""
        return "; ".join(state.line(names).removeprefix("not finished: ") for state in self.unsettled)
