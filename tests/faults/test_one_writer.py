"""One writer per store folder: a second `tg-processor triples` on the data folder a running one holds
is refused before it joins any flow, in one line naming the holder's PID, and the first keeps running.
Without the lock the second joined the flow, shared the subscription, and every collection the first had
opened failed in it with RocksDB's LOCK error, shown to users."""

from __future__ import annotations

import pytest

from tracegraph.base.folder_lock import LOCK_FILE

from support.procs import spawn, stop, tg, wait_until

pytestmark = [pytest.mark.rabbitmq, pytest.mark.faults, pytest.mark.timeout(180)]


def _holds(folder, pid: int) -> bool:
    lock = folder / LOCK_FILE
    return lock.exists() and lock.read_text() == f"{pid}\n"


@pytest.mark.parametrize("processor, folder", [("triples", "triples"), ("keyword-index", "keywords")])
def test_a_second_store_owner_on_a_held_store_folder_refuses_to_start(rabbitmq_url, tmp_path, processor, folder):
    bus = ["--pubsub", "rabbitmq", "--pubsub-url", rabbitmq_url]
    data = tmp_path / "data"
    config = spawn("tg-processor", "config", *bus, "--data-dir", str(tmp_path / "config"))
    first = spawn("tg-processor", processor, *bus, "--data-dir", str(data))
    try:
        wait_until(lambda: _holds(data / folder, first.pid) or first.poll() is not None, timeout=60,
                   what=f"the first {processor} to hold its store folder")
        assert first.poll() is None, stop(first)

        second = tg("tg-processor", processor, *bus, "--data-dir", str(data), timeout=90)

        assert second.returncode == 1, second.stderr
        lines = second.stderr.strip().splitlines()
        assert len(lines) == 1, second.stderr
        assert lines[0].startswith(
            f"tg-processor: error: the {processor} store folder {(data / folder).resolve()} is in use by process "
            f"{first.pid} (another tg-processor {processor} or a tg-launch)"), lines[0]
        assert "chunker, kg-extract, embeddings" in lines[0] and "may run as several copies" in lines[0]
        assert first.poll() is None and _holds(data / folder, first.pid)  # the holder is untouched
    finally:
        printed = stop(first)
        stop(config)
    assert "Traceback" not in printed, printed
