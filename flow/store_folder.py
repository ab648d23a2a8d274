"""A store-owning processor holds its store folder while it runs (base/folder_lock.py), so a second copy
on the same --data-dir refuses to start in one line naming the holder, instead of joining the flow and
failing every read and write of the collections the first copy opened."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from pathlib import Path

from tracegraph.base.folder_lock import folder_held

COPIES = ("processors that keep no store (chunker, kg-extract, embeddings, graph-rag, agent, …) "
          "may run as several copies")


def store_folder_held(processor: str, folder: Path, server: str = "") -> AbstractAsyncContextManager[None]:
    """Hold `folder` for `processor` (e.g. "triples"); `server` names the store server that lets it run
    as several copies, if there is one."""
    instead = f", or {server}" if server else ""

    def refusal(where: Path, holder: str) -> str:
        return (f"the {processor} store folder {where} is in use by {holder} (another tg-processor {processor} "
                f"or a tg-launch): its store takes one process; stop it, pass another --data-dir{instead}. "
                f"Only {COPIES}")

    return folder_held(folder, refusal)
