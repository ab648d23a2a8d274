"""The scale-out triple store on Cassandra: each quad is written under several keys, so every pattern is a key read.

Terms are stored as canonical N-Triples text (`terms.nt`; `<<( s p o )>>` for a triple term)
and read back by parsing N-Quads with pyoxigraph, so this engine and the embedded one accept
and return the same data. The driver is synchronous: every call runs in a worker thread.

Schema (keyspace `tracegraph` by default; `g` is the graph's N-Triples text, or "@default"):

    collections     ((owner), coll)                          collections(user), drop
    graphs          ((owner, coll), g)                       g="*" fans out over these
    quads_spo       ((owner, coll, g, s), p, o)              s, sp, spo
    quads_pos       ((owner, coll, g, p), o, s)              p, po
    quads_osp       ((owner, coll, g, o), s, p)              o, os
    quads_by_graph  ((owner, coll, g, bucket), s, p, o)      nothing bound, count, drop

Inserts are upserts, so writing a quad twice is harmless. The tables are written without a
logged batch: a failure part-way raises TransientError, and the retried (idempotent) write
completes what was missed. Cassandra caps a key column at 64 KiB, so a longer term (say, a
whole document as a literal) is refused by the server; keep such text in the blob store.
"""

from __future__ import annotations

import asyncio
import re
import threading
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import islice
from typing import Any, TypeVar

import pyoxigraph as ox
from cassandra import ConsistencyLevel, OperationTimedOut, RequestExecutionException
from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile, NoHostAvailable, Session
from cassandra.concurrent import execute_concurrent, execute_concurrent_with_args
from cassandra.connection import ConnectionException
from cassandra.policies import DCAwareRoundRobinPolicy, TokenAwarePolicy
from cassandra.query import PreparedStatement, tuple_factory

from tracegraph.base.errors import ConfigError, QueryError, TransientError
from tracegraph.base.stores.protocol import ALL_GRAPHS, DEFAULT_GRAPH, CollectionRef, SparqlResult
from tracegraph.base.stores.terms import graph_to_ox, iri_to_ox, nt, parse_nquads, quad_to_ox, read_nquads, to_ox
from tracegraph.schemas.rdf import IriTerm, Term, Triple

T = TypeVar("T")
Key = tuple[str, str, str, str]  # s, p, o, g as stored

DEFAULT_GRAPH_KEY = "@default"  # an N-Triples term never starts with "@"
BUCKETS = 64  # partitions per graph in quads_by_graph; fixed once a keyspace holds data
CHUNK = 5_000  # quads per round of concurrent writes
_KEYSPACE = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,47}$")
# Each index table's key order; every non-empty set of bound positions is a prefix of one of them.
INDEXES: dict[str, tuple[str, str, str]] = {"spo": ("s", "p", "o"), "pos": ("p", "o", "s"), "osp": ("o", "s", "p")}
_TRANSIENT = (NoHostAvailable, OperationTimedOut, RequestExecutionException, ConnectionException)


def _schema(keyspace: str, replication_factor: int) -> list[str]:
    quads = "owner text, coll text, g text, s text, p text, o text"
    return [
        f"CREATE KEYSPACE IF NOT EXISTS {keyspace} WITH replication = "
        f"{{'class': 'SimpleStrategy', 'replication_factor': {replication_factor}}}",
        f"CREATE TABLE IF NOT EXISTS {keyspace}.collections (owner text, coll text, PRIMARY KEY ((owner), coll))",
        f"CREATE TABLE IF NOT EXISTS {keyspace}.graphs (owner text, coll text, g text, PRIMARY KEY ((owner, coll), g))",
        f"CREATE TABLE IF NOT EXISTS {keyspace}.quads_by_graph ({quads}, bucket int, "
        "PRIMARY KEY ((owner, coll, g, bucket), s, p, o))",
        *(f"CREATE TABLE IF NOT EXISTS {keyspace}.quads_{name} ({quads}, PRIMARY KEY ((owner, coll, g, {a}), {b}, {c}))"
          for name, (a, b, c) in INDEXES.items()),
    ]


def graph_key(graph: ox.NamedNode | ox.BlankNode | ox.DefaultGraph) -> str:
    return DEFAULT_GRAPH_KEY if isinstance(graph, ox.DefaultGraph) else nt(graph)


def bucket(s: str) -> int:
    """The quads_by_graph partition of a subject: all quads of one subject share it."""
    return zlib.crc32(s.encode()) % BUCKETS


def _contact_point(host: str) -> str | tuple[str, int]:
    """"host", "host:port" or "[v6]:port" as the driver takes it."""
    name, sep, port = host.rpartition(":")
    if sep and port.isdigit() and (":" not in name or name.startswith("[")):
        return name.strip("[]"), int(port)
    return host


class CassandraTripleStore:
    """TripleStore on a Cassandra (or Scylla) cluster; connects, creating the schema if needed, on first use.

    A missing keyspace is created with SimpleStrategy and `replication_factor`; for several
    data centres create it beforehand with NetworkTopologyStrategy (an existing one is kept).
    Reads and writes use LOCAL_QUORUM, so a write is visible to the next read.

    SPARQL is not offered: query() raises QueryError. rdflib could evaluate SPARQL over
    pattern lookups, but it has no RDF 1.2 triple terms, which our explanations are made of,
    and each join step would be a round trip per binding. Use match() (pattern queries).
    """

    def __init__(self, hosts: Sequence[str], keyspace: str = "tracegraph", *, replication_factor: int = 1,
                 local_dc: str = "", concurrency: int = 64) -> None:
        if not _KEYSPACE.match(keyspace):
            raise ConfigError(f"invalid Cassandra keyspace name {keyspace!r}")
        if not hosts:
            raise ConfigError("CassandraTripleStore needs at least one host")
        self._hosts = list(hosts)
        self._keyspace = keyspace
        self._replication_factor = replication_factor
        self._local_dc = local_dc
        self._concurrency = concurrency
        self._lock = threading.Lock()
        self._cluster: Cluster | None = None
        self._session: Session | None = None
        self._prepared: dict[str, PreparedStatement] = {}

    async def add(self, ref: CollectionRef, triples: Iterable[Triple]) -> int:
        given = list(triples)
        await self._run(lambda: self._write(ref, (_key(quad_to_ox(t)) for t in given)))
        return len(given)

    async def add_nquads(self, ref: CollectionRef, nquads: str) -> int:
        """Parsed by pyoxigraph (blank node labels kept, so a re-send is idempotent) and written in chunks."""
        return await self._run(lambda: self._write(ref, (_key(q) for q in parse_nquads(nquads))))

    async def match(self, ref: CollectionRef, s: Term | None = None, p: IriTerm | None = None,
                    o: Term | None = None, g: str | None = DEFAULT_GRAPH, limit: int = 10_000) -> list[Triple]:
        bound = {name: nt(to_ox(term)) for name, term in (("s", s), ("p", p), ("o", o)) if term is not None}
        return await self._run(lambda: self._match(ref, bound, g, max(limit, 0)))

    async def around(self, ref: CollectionRef, nodes: Sequence[str], limit: int = 100,
                     g: str | None = DEFAULT_GRAPH) -> list[Triple]:
        """Two index reads per node (as subject, as object), all in one worker-thread call."""
        keys = [nt(iri_to_ox(node)) for node in dict.fromkeys(nodes)]

        def lookup() -> list[Triple]:
            found: dict[Triple, None] = {}
            for key in keys:
                found.update(dict.fromkeys(self._match(ref, {"s": key}, g, limit)))
                found.update(dict.fromkeys(self._match(ref, {"o": key}, g, limit)))
            return list(found)

        return await self._run(lookup) if keys else []

    async def query(self, ref: CollectionRef, sparql: str, *, limit: int = 10_000,
                    timeout: float = 30.0) -> SparqlResult:
        raise QueryError("SPARQL is not supported on the Cassandra engine; use pattern queries")

    async def remove(self, ref: CollectionRef, triples: Iterable[Triple]) -> int:
        keys = list(dict.fromkeys(_key(quad_to_ox(t)) for t in triples))
        return await self._run(lambda: self._remove(ref, keys))

    async def count(self, ref: CollectionRef, g: str | None = ALL_GRAPHS) -> int:
        def count_buckets() -> int:
            params = [(ref.user, ref.collection, graph, b) for graph in self._graphs(ref, g) for b in range(BUCKETS)]
            stmt = self._stmt("SELECT COUNT(*) FROM quads_by_graph WHERE owner=? AND coll=? AND g=? AND bucket=?")
            return sum(rows.one()[0] for rows in self._each(stmt, params))
        return await self._run(count_buckets)

    async def collections(self, user: str) -> list[str]:
        owner = CollectionRef(user, "probe").user  # the same name rule as every collection
        stmt = "SELECT coll FROM collections WHERE owner=?"
        return await self._run(lambda: sorted(row[0] for row in self._session_().execute(self._stmt(stmt), (owner,))))

    async def drop(self, ref: CollectionRef) -> None:
        """Delete the collection: O(its distinct terms) partition deletes, found through quads_by_graph.

        Quads written to the collection while it is being dropped may survive the drop.
        """
        await self._run(lambda: self._drop(ref))

    async def aclose(self) -> None:
        cluster, self._cluster, self._session = self._cluster, None, None
        self._prepared.clear()
        if cluster is not None:
            await asyncio.to_thread(cluster.shutdown)

    # Everything below runs in worker threads.

    async def _run(self, work: Callable[[], T]) -> T:
        return await asyncio.to_thread(self._guarded, work)

    @staticmethod
    def _guarded(work: Callable[[], T]) -> T:
        try:
            return work()
        except _TRANSIENT as exc:
            raise TransientError(f"cassandra: {exc}") from exc

    def _session_(self) -> Session:
        with self._lock:
            if self._session is None:
                policy = TokenAwarePolicy(DCAwareRoundRobinPolicy(local_dc=self._local_dc))
                profile = ExecutionProfile(load_balancing_policy=policy, row_factory=tuple_factory,
                                           consistency_level=ConsistencyLevel.LOCAL_QUORUM)
                cluster = Cluster(contact_points=[_contact_point(h) for h in self._hosts],
                                  execution_profiles={EXEC_PROFILE_DEFAULT: profile})
                session = cluster.connect()
                for ddl in _schema(self._keyspace, self._replication_factor):
                    session.execute(ddl)
                session.set_keyspace(self._keyspace)
                self._cluster, self._session = cluster, session
            return self._session

    def _stmt(self, cql: str) -> PreparedStatement:
        session = self._session_()
        with self._lock:
            prepared = self._prepared.get(cql)
        if prepared is None:
            prepared = session.prepare(cql)
            with self._lock:
                self._prepared[cql] = prepared
        return prepared

    def _each(self, stmt: PreparedStatement, params: list[tuple[Any, ...]]) -> list[Any]:
        """Run one statement per parameter tuple, concurrently; the result sets, in order."""
        results = execute_concurrent_with_args(self._session_(), stmt, params, concurrency=self._concurrency)
        return [r.result_or_exc for r in results]

    def _write(self, ref: CollectionRef, keys: Iterator[Key]) -> int:
        owner, coll = ref.user, ref.collection
        columns = "(owner, coll, g, s, p, o) VALUES (?, ?, ?, ?, ?, ?)"
        inserts = [self._stmt(f"INSERT INTO quads_{name} {columns}") for name in INDEXES]
        by_graph = self._stmt("INSERT INTO quads_by_graph (owner, coll, g, bucket, s, p, o) VALUES (?, ?, ?, ?, ?, ?, ?)")
        add_graph = self._stmt("INSERT INTO graphs (owner, coll, g) VALUES (?, ?, ?)")
        add_collection = self._stmt("INSERT INTO collections (owner, coll) VALUES (?, ?)")
        written, graphs = 0, set()
        # Keys are parsed a chunk at a time, so a syntax error stops the writing before its chunk.
        while chunk := list(islice(keys, CHUNK)):
            statements: list[tuple[PreparedStatement, tuple[Any, ...]]] = []
            if not written:
                statements.append((add_collection, (owner, coll)))
            for s, p, o, g in chunk:
                if g not in graphs:
                    graphs.add(g)
                    statements.append((add_graph, (owner, coll, g)))
                row = (owner, coll, g, s, p, o)
                statements += [(insert, row) for insert in inserts]
                statements.append((by_graph, (owner, coll, g, bucket(s), s, p, o)))
            execute_concurrent(self._session_(), statements, concurrency=self._concurrency)
            written += len(chunk)
        return written

    def _graphs(self, ref: CollectionRef, g: str | None) -> list[str]:
        if g != ALL_GRAPHS:
            return [graph_key(graph_to_ox(g))]
        stmt = self._stmt("SELECT g FROM graphs WHERE owner=? AND coll=?")
        return [row[0] for row in self._session_().execute(stmt, (ref.user, ref.collection))]

    def _match(self, ref: CollectionRef, bound: dict[str, str], g: str | None, limit: int) -> list[Triple]:
        lines: list[str] = []
        for graph in self._graphs(ref, g):
            for s, p, o in self._scan(ref, bound, graph, limit - len(lines)):
                lines.append(f"{s} {p} {o} {'' if graph == DEFAULT_GRAPH_KEY else graph} .\n")
            if len(lines) >= limit:
                break
        return read_nquads("".join(lines))

    def _scan(self, ref: CollectionRef, bound: dict[str, str], graph: str, limit: int) -> Iterator[tuple[str, str, str]]:
        """(s, p, o) rows of one graph matching `bound`, through the index whose key starts with the bound positions."""
        owner, coll = ref.user, ref.collection
        if limit <= 0:
            return
        if not bound:
            stmt = self._stmt("SELECT s, p, o FROM quads_by_graph WHERE owner=? AND coll=? AND g=? AND bucket=? LIMIT ?")
            for b in range(BUCKETS):
                rows = list(self._session_().execute(stmt, (owner, coll, graph, b, limit)))
                yield from rows
                limit -= len(rows)
                if limit <= 0:
                    return
            return
        name, order = next((name, order) for name, order in INDEXES.items() if set(order[:len(bound)]) == set(bound))
        where = " AND ".join(f"{col}=?" for col in order[:len(bound)])
        stmt = self._stmt(f"SELECT s, p, o FROM quads_{name} WHERE owner=? AND coll=? AND g=? AND {where} LIMIT ?")
        yield from self._session_().execute(stmt, (owner, coll, graph, *(bound[c] for c in order[:len(bound)]), limit))

    def _remove(self, ref: CollectionRef, keys: list[Key]) -> int:
        owner, coll = ref.user, ref.collection
        where = "owner=? AND coll=? AND g=? AND s=? AND p=? AND o=?"
        rows = [(owner, coll, g, s, p, o) for s, p, o, g in keys]
        found = self._each(self._stmt(f"SELECT s FROM quads_spo WHERE {where}"), rows)
        existed = [(row, key) for row, key, result in zip(rows, keys, found) if result.one() is not None]
        statements = [(self._stmt(f"DELETE FROM quads_{name} WHERE {where}"), row)
                      for row, _ in existed for name in INDEXES]
        by_graph = self._stmt(f"DELETE FROM quads_by_graph WHERE {where} AND bucket=?")
        statements += [(by_graph, (*row, bucket(key[0]))) for row, key in existed]
        execute_concurrent(self._session_(), statements, concurrency=self._concurrency)
        return len(existed)

    def _drop(self, ref: CollectionRef) -> None:
        owner, coll = ref.user, ref.collection
        scan = self._stmt("SELECT s, p, o FROM quads_by_graph WHERE owner=? AND coll=? AND g=? AND bucket=?")
        deletes = {name: self._stmt(f"DELETE FROM quads_{name} WHERE owner=? AND coll=? AND g=? AND {order[0]}=?")
                   for name, order in INDEXES.items()}
        clear_bucket = self._stmt("DELETE FROM quads_by_graph WHERE owner=? AND coll=? AND g=? AND bucket=?")
        for graph in self._graphs(ref, ALL_GRAPHS):
            seen: dict[str, set[str]] = {name: set() for name in INDEXES}
            for b, rows in enumerate(self._each(scan, [(owner, coll, graph, b) for b in range(BUCKETS)])):
                statements = []
                for row in rows:
                    for name, order in INDEXES.items():
                        term = row["spo".index(order[0])]
                        if term not in seen[name]:
                            seen[name].add(term)
                            statements.append((deletes[name], (owner, coll, graph, term)))
                statements.append((clear_bucket, (owner, coll, graph, b)))
                execute_concurrent(self._session_(), statements, concurrency=self._concurrency)
        session = self._session_()
        session.execute(self._stmt("DELETE FROM graphs WHERE owner=? AND coll=?"), (owner, coll))
        session.execute(self._stmt("DELETE FROM collections WHERE owner=? AND coll=?"), (owner, coll))


def _key(quad: ox.Quad) -> Key:
    return nt(quad.subject), nt(quad.predicate), nt(quad.object), graph_key(quad.graph_name)
