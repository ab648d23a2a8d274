"""One stack per data folder: an exclusive `flock` on a file inside it, holding the holder's PID.

The embedded stores (oxigraph's RocksDB above all) take their own locks only when first written to, so
a second `tg-launch` on the same folder would start, accept an upload, then fail deep inside a store.
Taking this lock before anything starts refuses it at once, naming the process that holds the folder.
The mechanism (base/folder_lock.py) is the one each store owner takes on its own store folder.
"""

from __future__ import annotations

from pathlib import Path

from tracegraph.base.folder_lock import LOCK_FILE, FolderInUse, FolderLock

__all__ = ["LOCK_FILE", "DataDirInUse", "DataDirLock"]


class DataDirInUse(FolderInUse):
    """Another process holds the data folder."""


class DataDirLock(FolderLock):
    """`with DataDirLock(path):` holds the whole data folder (creating it) or raises DataDirInUse."""

    error = DataDirInUse

    def __init__(self, data_dir: Path) -> None:
        super().__init__(data_dir, _refusal)
        self.data_dir = self.folder


def _refusal(folder: Path, holder: str) -> str:
    return (f"the data folder {folder} is in use by {holder} (another tg-launch or tg-demo); "
            "stop it or pass another --data-dir")
