"""Triple-store engines by name, imported lazily so the Cassandra driver is needed only when it is used."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from tracegraph.base.errors import ConfigError
from tracegraph.base.plugins import load
from tracegraph.base.stores.protocol import TripleStore

ENGINES: dict[str, str] = {
    "oxigraph": "tracegraph.base.stores.oxigraph:OxigraphTripleStore",
    "cassandra": "tracegraph.base.stores.cassandra:CassandraTripleStore",
}

EXTRAS = {"cassandra": "tracegraph[cassandra]"}
FOLDER = "triples"  # the oxigraph store's folder inside the data folder


def open_triple_store(engine: str = "oxigraph", *, data_dir: Path = Path("tg-data"),
                      cassandra_hosts: Sequence[str] | str = (), keyspace: str = "tracegraph") -> TripleStore:
    """The triple store for `--triples-engine NAME`: oxigraph under data_dir/triples, or a Cassandra cluster.

    Nothing is opened or connected here; each engine does that on first use, in a worker thread.
    `cassandra_hosts` may be a list or a comma-separated string such as TG_CASSANDRA_HOSTS.
    """
    cls = load(ENGINES, engine, "triple-store engine", EXTRAS)
    if engine == "cassandra":
        hosts = [h.strip() for h in cassandra_hosts.split(",")] if isinstance(cassandra_hosts, str) \
            else list(cassandra_hosts)
        hosts = [h for h in hosts if h]
        if not hosts:
            raise ConfigError("the cassandra triple-store engine needs at least one host (TG_CASSANDRA_HOSTS)")
        return cls(hosts, keyspace)
    return cls(Path(data_dir) / FOLDER)


def local_folder_for(settings) -> Path | None:
    """The folder the triple store keeps on this machine (oxigraph), or None for a store server."""
    return None if settings.triples_engine == "cassandra" else Path(settings.data_dir) / FOLDER


def triple_store_for(settings) -> TripleStore:
    """The triple store a processor's RuntimeSettings name (TG_TRIPLES_ENGINE, TG_CASSANDRA_HOSTS, data dir)."""
    return open_triple_store(settings.triples_engine, data_dir=settings.data_dir,
                             cassandra_hosts=settings.cassandra_hosts or ())
