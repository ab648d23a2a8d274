"""Store folders: held once per process however many owners it runs, refused to another process in one
line naming the holder's PID and the processors that may run as several copies."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tracegraph.base.folder_lock import LOCK_FILE, FolderInUse
from tracegraph.base.settings import RuntimeSettings
from tracegraph.base.stores.triples_registry import local_folder_for
from tracegraph.flow.store_folder import store_folder_held

HOLD = """
import asyncio, sys
from pathlib import Path
from tracegraph.flow.store_folder import store_folder_held
async def hold():
    async with store_folder_held("triples", Path(sys.argv[1])):
        print("held", flush=True)
        await asyncio.sleep(60)
asyncio.run(hold())
"""


async def test_owners_in_one_process_share_the_folder_and_the_last_one_out_frees_it(tmp_path):
    folder = tmp_path / "triples"
    async with store_folder_held("triples", folder):
        async with store_folder_held("triples", folder):  # the all-in-one stack: a second owner, same process
            assert (folder / LOCK_FILE).read_text() == f"{os.getpid()}\n"
        assert (folder / LOCK_FILE).read_text() == f"{os.getpid()}\n"  # still held by the first
        assert _refused_elsewhere(folder)
    assert (folder / LOCK_FILE).read_text() == ""
    assert not _refused_elsewhere(folder)


async def test_another_process_is_refused_in_one_line_naming_the_holder(tmp_path):
    folder = tmp_path / "keywords"
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(folder)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        with pytest.raises(FolderInUse) as refused:
            async with store_folder_held("keyword-index", folder):
                pass
    finally:
        holder.kill()
        holder.wait(10)
        holder.stdout.close()
    message = str(refused.value)
    assert "\n" not in message
    assert message.startswith(f"the keyword-index store folder {folder.resolve()} is in use by process {holder.pid} "
                              "(another tg-processor keyword-index or a tg-launch)")
    assert "chunker, kg-extract, embeddings" in message and "may run as several copies" in message
    async with store_folder_held("keyword-index", folder):  # the kernel dropped the killed holder's lock
        pass


async def test_a_store_server_hint_is_named_when_there_is_one(tmp_path):
    async with store_folder_held("triples", tmp_path):
        refusal = _refusal_elsewhere(tmp_path, server="use a Cassandra cluster")
    assert "pass another --data-dir, or use a Cassandra cluster. Only processors" in refusal


def test_only_the_embedded_triple_store_has_a_local_folder(tmp_path):
    assert local_folder_for(RuntimeSettings(data_dir=tmp_path)) == tmp_path / "triples"
    assert local_folder_for(RuntimeSettings(data_dir=tmp_path, triples_engine="cassandra")) is None


CHECK = """
import asyncio, sys
from pathlib import Path
from tracegraph.base.folder_lock import FolderInUse
from tracegraph.flow.store_folder import store_folder_held
async def check():
    try:
        async with store_folder_held("triples", Path(sys.argv[1]), sys.argv[2]):
            print("free")
    except FolderInUse as exc:
        print(exc)
asyncio.run(check())
"""


def _refusal_elsewhere(folder: Path, server: str = "") -> str:
    """What another process is told when it tries to hold `folder` ("free" if it could)."""
    return subprocess.run([sys.executable, "-c", CHECK, str(folder), server], capture_output=True, text=True,
                          check=True, timeout=60).stdout.strip()


def _refused_elsewhere(folder: Path) -> bool:
    return _refusal_elsewhere(folder) != "free"
