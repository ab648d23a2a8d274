"""Blob engine on the local filesystem: data_dir/blobs/<user>/<collection>/<sha256 of key>.

Writes go to a temporary file that is renamed into place, so a crash never leaves half a blob.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import shutil
import tempfile
from pathlib import Path

from tracegraph.base.stores.protocol import CollectionRef


class FileBlobStore:
    def __init__(self, root: Path) -> None:
        self.root = root

    def _path(self, ref: CollectionRef, key: str) -> Path:
        digest = hashlib.sha256(key.encode()).hexdigest()
        return self.root / ref.user / ref.collection / digest[:2] / digest

    async def put(self, ref: CollectionRef, key: str, data: bytes) -> None:
        await asyncio.to_thread(self._write, self._path(ref, key), data)

    @staticmethod
    def _write(path: Path, data: bytes) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    async def get(self, ref: CollectionRef, key: str) -> bytes:
        path = self._path(ref, key)
        try:
            return await asyncio.to_thread(path.read_bytes)
        except FileNotFoundError:
            raise KeyError(key) from None

    async def delete(self, ref: CollectionRef, key: str) -> bool:
        path = self._path(ref, key)

        def unlink() -> bool:
            try:
                path.unlink()
                return True
            except FileNotFoundError:
                return False
        return await asyncio.to_thread(unlink)

    async def drop(self, ref: CollectionRef) -> None:
        await asyncio.to_thread(shutil.rmtree, self.root / ref.user / ref.collection, True)

    async def aclose(self) -> None:
        return None
