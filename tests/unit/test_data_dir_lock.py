"""DataDirLock and the Stack that takes it: one holder per data folder, named when refused."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tracegraph.base.bus.inproc import InprocBackend
from tracegraph.launch.data_lock import LOCK_FILE, DataDirInUse, DataDirLock
from tracegraph.launch.stack import Stack

from support.stack import config_factory, settings_for

HOLD = """
import sys, time
from pathlib import Path
from tracegraph.launch.data_lock import DataDirLock
with DataDirLock(Path(sys.argv[1])):
    print("held", flush=True)
    time.sleep(60)
"""


def test_a_second_lock_on_the_folder_is_refused_with_the_holders_pid(tmp_path):
    with DataDirLock(tmp_path / "data"):
        assert (tmp_path / "data" / LOCK_FILE).read_text() == f"{os.getpid()}\n"
        with pytest.raises(DataDirInUse, match=rf"^the data folder {tmp_path}/data is in use by process "
                                               rf"{os.getpid()} \(another tg-launch or tg-demo\); stop it or "
                                               r"pass another --data-dir$"):
            DataDirLock(tmp_path / "data").acquire()
    with DataDirLock(tmp_path / "data"):  # released on exit
        pass


def test_a_lock_held_by_a_process_that_was_killed_is_free(tmp_path):
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        with pytest.raises(DataDirInUse, match=f"in use by process {holder.pid} "):
            DataDirLock(tmp_path).acquire()
    finally:
        holder.kill()
        holder.wait(10)
        holder.stdout.close()
    with DataDirLock(tmp_path):
        pass


async def test_a_stack_holds_its_data_folder_while_it_runs(tmp_path):
    backend = InprocBackend()
    try:
        async with Stack(backend, settings_for(tmp_path), [config_factory()]):
            with pytest.raises(DataDirInUse):
                async with Stack(backend, settings_for(tmp_path), [config_factory()]):
                    pass
        async with Stack(backend, settings_for(tmp_path), [config_factory()]):  # free again
            pass
    finally:
        await backend.aclose()
