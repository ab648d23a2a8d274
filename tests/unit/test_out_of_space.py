"""A full disk is a transient fault: recognised from every engine's own error, retried without limit
by a consumer (never given up), and a triple store that met it is reopened so it recovers by itself."""

from __future__ import annotations

import asyncio
import errno
import sqlite3
from dataclasses import dataclass, field
from types import SimpleNamespace

import pytest

from tracegraph.base.errors import (
    ConfigError, OutOfSpace, RemoteError, ServiceUnavailable, TransientError, is_out_of_space, is_transient,
)
from tracegraph.base.flow import ConsumerRunner
from tracegraph.base.stores.oxigraph import OxigraphTripleStore
from tracegraph.base.stores.protocol import SOURCE_GRAPH, CollectionRef
from tracegraph.schemas.rdf import Triple, iri, literal


def _raised_from(cause: BaseException) -> TransientError:
    try:
        try:
            raise cause
        except Exception as exc:
            raise TransientError("store write failed") from exc
    except TransientError as wrapped:
        return wrapped


@pytest.mark.parametrize("exc", [
    OSError(errno.ENOSPC, "No space left on device"),
    OSError("IO error: No space left on device: While appending to file: /d/000163.sst: No space left on device"),
    sqlite3.OperationalError("database or disk is full"),
    ValueError("An IO error occurred: 'No space left on device (os error 28)'"),  # tantivy's wording
    OutOfSpace("disk full"),
    RemoteError("out-of-space", "the librarian's disk is full"),
    _raised_from(OSError(errno.ENOSPC, "No space left on device")),
])
def test_every_engines_full_disk_error_is_out_of_space_and_transient(exc):
    assert is_out_of_space(exc)
    assert is_transient(exc)


@pytest.mark.parametrize("exc", [
    ValueError("bad literal"),
    OSError(errno.ENOENT, "No such file or directory"),
    sqlite3.OperationalError("no such table: rows"),
    ServiceUnavailable("downstream away"),
    ConfigError("no collection named 'no space left on device' (database or disk is full)"),  # quoted input
])
def test_other_failures_are_not_out_of_space(exc):
    assert not is_out_of_space(exc)


@dataclass
class FakeDelivery:
    attempt: int
    nacked: int = 0

    async def nack(self) -> None:
        self.nacked += 1


@dataclass
class FakeProcessor:
    name: str = "fake"
    settings: SimpleNamespace = field(default_factory=lambda: SimpleNamespace(max_attempts=3, retry_backoff=0.0))


def _runner() -> ConsumerRunner:
    runner = object.__new__(ConsumerRunner)
    runner.processor, runner.spec = FakeProcessor(), SimpleNamespace(name="input")
    return runner


def test_a_full_disk_never_spends_the_attempts_of_a_message():
    runner = _runner()
    delivery = FakeDelivery(attempt=500)
    assert asyncio.run(runner._retry_later(delivery, OSError(errno.ENOSPC, "No space left on device")))
    assert asyncio.run(runner._retry_later(delivery, sqlite3.OperationalError("database or disk is full")))
    assert delivery.nacked == 2, "redelivered, not given up"


def test_other_transient_failures_are_still_given_up_after_max_attempts():
    runner = _runner()
    delivery = FakeDelivery(attempt=3)
    assert not asyncio.run(runner._retry_later(delivery, ServiceUnavailable("downstream away")))
    assert delivery.nacked == 0


FACT = Triple(s=iri("urn:e:a"), p=iri("urn:p:name"), o=literal("A"))
OTHER = Triple(s=iri("urn:e:b"), p=iri("urn:p:name"), o=literal("B"))


def test_a_triple_store_that_met_a_full_disk_is_read_still_and_reopened_for_the_next_write(tmp_path, monkeypatch):
    from tracegraph.base.stores import oxigraph

    ref = CollectionRef("u", "c")

    def full(_store) -> int:
        raise OSError("IO error: No space left on device: While appending to file: x.sst")

    async def scenario() -> None:
        store = OxigraphTripleStore(tmp_path)
        try:
            await store.add(ref, [FACT])
            broken = store._cache()._open[ref]
            with pytest.raises(OutOfSpace):
                await store._write(ref, full, create=True)
            assert broken.broken and await store.count(ref) == 1, "reads go on while the disk is full"

            monkeypatch.setattr(oxigraph, "free_bytes", lambda folder: 0)
            with pytest.raises(OutOfSpace):  # still no room: the broken store stays open for reads
                await store.add(ref, [OTHER])
            assert store._cache()._open[ref] is broken and broken.store is not None

            monkeypatch.setattr(oxigraph, "free_bytes", lambda folder: 1 << 30)
            await store.add(ref, [OTHER])  # space is back: a fresh handle, without RocksDB's background error
            assert store._cache()._open[ref] is not broken and broken.store is None
            assert await store.count(ref) == 2
        finally:
            await store.aclose()

    asyncio.run(scenario())


def test_the_triples_processors_give_up_is_recorded_on_the_document(tmp_path):
    from tracegraph.base.provenance.vocab import TG
    from tracegraph.flow.triples.processor import TriplesProcessor
    from tracegraph.schemas.ingest import Metadata, Triples

    async def scenario() -> list[Triple]:
        store = OxigraphTripleStore(tmp_path)
        try:
            triples = SimpleNamespace(input=TriplesProcessor.input, bulk=TriplesProcessor.bulk, store=store,
                                      name="triples")
            meta = Metadata(id="urn:chunk:1", root="urn:doc:1", user="u", collection="c")
            await TriplesProcessor.gave_up(triples, TriplesProcessor.input, Triples(metadata=meta, triples=[FACT]),
                                           None, "after 10 attempts: store locked")
            return await store.match(CollectionRef("u", "c"), p=TG.indexingError, g=SOURCE_GRAPH)
        finally:
            await store.aclose()

    recorded = asyncio.run(scenario())
    assert [t.s.iri for t in recorded] == ["urn:doc:1"]
    assert "triples: quads not stored: after 10 attempts" in recorded[0].o.value


def test_the_librarian_refuses_a_document_below_the_free_space_floor(tmp_path, monkeypatch):
    from tracegraph.base import disk_space
    from tracegraph.base.errors import DiskFullRefusal

    monkeypatch.setattr(disk_space, "free_bytes", lambda folder: 150 * disk_space.MB)
    disk_space.require_free_space(tmp_path / "library", 100, 10 * disk_space.MB)  # leaves 140 MB: taken
    with pytest.raises(DiskFullRefusal, match="150 MB free, the librarian keeps at least 100 MB"):
        disk_space.require_free_space(tmp_path / "library", 100, 60 * disk_space.MB)
    disk_space.require_free_space(tmp_path / "library", 0, 10**15)  # 0: no floor


def test_free_space_is_measured_on_the_nearest_existing_folder(tmp_path):
    from tracegraph.base.disk_space import free_bytes
    assert free_bytes(tmp_path / "not" / "made" / "yet") > 0


def test_rollback_ends_an_open_transaction_and_tolerates_one_already_ended():
    from tracegraph.base.stores.sqlite import rollback

    db = sqlite3.connect(":memory:", isolation_level=None)
    db.execute("CREATE TABLE t (x)")
    db.execute("BEGIN IMMEDIATE")
    db.execute("INSERT INTO t VALUES (1)")
    rollback(db)
    assert not db.in_transaction and db.execute("SELECT COUNT(*) FROM t").fetchone() == (0,)
    rollback(db)  # SQLite rolled back already (as after some full-disk errors): nothing to do, no error
    db.execute("BEGIN IMMEDIATE")  # a new transaction starts: the connection is usable
    db.execute("COMMIT")


def test_a_sqlite_database_that_filled_its_disk_writes_again_once_space_is_back(tmp_path):
    import subprocess

    from tracegraph.base.stores.sqlite import SqliteDatabase

    folder = tmp_path / "small"
    folder.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(folder)],
                      capture_output=True).returncode != 0:
        pytest.skip("cannot mount a small tmpfs (needs root)")

    def insert(db: sqlite3.Connection, rows: int) -> None:
        db.executemany("INSERT INTO t VALUES (?)", [("x" * 4000,)] * rows)

    async def scenario() -> int:
        database = await SqliteDatabase(folder / "x.sqlite", "CREATE TABLE IF NOT EXISTS t (x)").open()
        try:
            with pytest.raises(sqlite3.OperationalError) as full:
                for _ in range(100):
                    await database.transaction(insert, 50)
            assert is_out_of_space(full.value)
            subprocess.run(["mount", "-o", "remount,size=8m", str(folder)], check=True)
            await database.transaction(insert, 1)
            return (await database.fetchone("SELECT COUNT(*) FROM t"))[0]
        finally:
            await database.close()

    try:
        assert asyncio.run(scenario()) > 0
    finally:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True)


def test_a_service_answers_an_engines_full_disk_error_as_out_of_space():
    from tracegraph.base.flow import ServiceRunner

    answered = []
    runner = object.__new__(ServiceRunner)
    runner.processor = FakeProcessor()
    runner.processor.stats = SimpleNamespace(failed=0)
    runner.spec = SimpleNamespace(name="query")

    async def refuse(delivery, error) -> None:
        answered.append(error)

    runner.refuse = refuse
    asyncio.run(runner.fail(FakeDelivery(attempt=1), sqlite3.OperationalError("database or disk is full")))
    assert answered[0].type == "out-of-space"
