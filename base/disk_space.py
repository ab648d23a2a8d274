"""The free-space floor: a document is refused before it is stored when the disk it would land on
has too little room, so a full disk stops new work at the door instead of failing it halfway."""

from __future__ import annotations

import shutil
from pathlib import Path

from tracegraph.base.errors import DiskFullRefusal

MB = 1024 * 1024


def free_bytes(folder: Path) -> int:
    """Free bytes on the filesystem holding `folder` (or its nearest existing parent, before it is made)."""
    here = folder.absolute()
    while not here.exists() and here != here.parent:
        here = here.parent
    return shutil.disk_usage(here).free


def require_free_space(folder: Path, floor_mb: int, incoming: int) -> None:
    """Refuse (DiskFullRefusal) when storing `incoming` bytes would leave less than `floor_mb` free."""
    if floor_mb <= 0:
        return
    free = free_bytes(folder)
    if free - incoming < floor_mb * MB:
        raise DiskFullRefusal(
            f"not enough free disk space to store the document: {free // MB} MB free, the librarian keeps at "
            f"least {floor_mb} MB (TG_MIN_FREE_MB); free some space and add it again")


def refusal_for_full_disk(operation: str) -> DiskFullRefusal:
    """What the librarian answers when its disk filled during `operation` (which stored nothing)."""
    return DiskFullRefusal(f"the librarian's disk is full (no space left on device): {operation} stored "
                           "nothing; free some space and try again")
