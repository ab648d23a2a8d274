"""The embedded triple store: one on-disk pyoxigraph Store per collection, under root/<user>/<collection>/.

A directory per collection isolates tenants (no SPARQL FROM or GRAPH can reach another
collection's data) and makes drop cheap (remove the directory). Every pyoxigraph call runs
in a worker thread; pyoxigraph releases the GIL, so the event loop keeps running meanwhile.
"""

from __future__ import annotations

import asyncio
import logging
import re
import shutil
import threading
import traceback
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from itertools import islice
from pathlib import Path
from typing import TypeVar

import pyoxigraph as ox

from tracegraph.base.disk_space import free_bytes
from tracegraph.base.errors import OutOfSpace, QueryError, TransientError, is_out_of_space
from tracegraph.base.stores.protocol import ALL_GRAPHS, DEFAULT_GRAPH, CollectionRef, SparqlResult
from tracegraph.base.stores.terms import (from_ox, iri_to_ox, graph_to_ox, parse_nquads, quad_from_ox, quad_to_ox, to_ox,
                                          triple_from_ox)
from tracegraph.schemas.rdf import IriTerm, LiteralTerm, Term, Triple, TripleTerm

T = TypeVar("T")
log = logging.getLogger(__name__)

# Measured on this 2-core machine: below ~10k quads a transaction (`extend`) is faster, since
# every bulk call writes and ingests new SST files (~140 ms each); above it bulk wins up to 3x.
BULK_THRESHOLD = 20_000

# pyoxigraph opens RocksDB with 128 MB memtables for each of its 11 column families and no overall
# write-buffer limit, so a stream of small writes (an explain trace of ~200 quads per question) is
# kept in memory until some column family fills: ~1 KB of RSS per quad, over 1 GB before the first
# automatic flush. Flushing a store after this many quads keeps its memtables near 10 MB; one flush
# takes ~0.1 s in the writing worker thread (measured in bench/soak.py).
FLUSH_EVERY = 10_000


@dataclass(eq=False)
class _OpenStore:
    store: ox.Store | None
    users: int = 0
    unflushed: int = 0  # quads written (or removed) since this store's memtables were last flushed
    broken: bool = False  # met a full disk: still read, but reopened before the next write


def _cannot_open(ref: CollectionRef, exc: OSError) -> TransientError:
    """The error for a store that would not open: what failed and what to do; RocksDB's own text
    (with the store's path) goes to the log."""
    log.warning("oxigraph store %s cannot be opened: %s", ref, exc)
    if is_out_of_space(exc):
        return _out_of_space(ref)
    if "lock" in str(exc).lower():
        return TransientError(f"the triple store of collection {ref} is locked by another process (a second "
                              "tg-launch or tg-processor on the same --data-dir?): stop it, or give each its "
                              "own --data-dir")
    return TransientError(f"the triple store of collection {ref} cannot be opened ({type(exc).__name__}); "
                          "see the triples processor's log")


REOPEN_FREE_BYTES = 1 << 20  # free space a broken store waits for before it is reopened


def _out_of_space(ref: CollectionRef) -> OutOfSpace:
    return OutOfSpace(f"the triple store of collection {ref} met a full disk (no space left on device); "
                      "its writes wait until space is freed")


class _StoreCache:
    """The open stores, least recently used first; a store in use is never closed under its user.

    Its methods block (a lock, opening RocksDB, removing files): call them from worker threads.
    """

    def __init__(self, root: Path, max_open: int, flush_every: int = FLUSH_EVERY) -> None:
        self.root = root
        self.max_open = max_open
        self.flush_every = flush_every
        self.owners = 0  # OxigraphTripleStore instances sharing this cache
        self._lock = threading.Lock()
        self._open: OrderedDict[CollectionRef, _OpenStore] = OrderedDict()

    def path(self, ref: CollectionRef) -> Path:
        return self.root / ref.user / ref.collection

    def lease(self, ref: CollectionRef, create: bool, write: bool = False) -> _OpenStore | None:
        """The open store of `ref` (None if it does not exist and `create` is false); release it after use."""
        with self._lock:
            entry = self._open.get(ref)
            if entry is not None and entry.broken and write:
                entry = self._close_broken(ref, entry)
            if entry is None:
                path = self.path(ref)
                if not create and not path.is_dir():
                    return None
                path.mkdir(parents=True, exist_ok=True)
                entry = self._open[ref] = _OpenStore(ox.Store(str(path)))
            self._open.move_to_end(ref)
            entry.users += 1
            self._evict()
            return entry

    def lease_if_open(self, ref: CollectionRef) -> _OpenStore | None:
        """Like `lease`, but only a store that is already open: never touches the disk."""
        with self._lock:
            entry = self._open.get(ref)
            if entry is None or entry.store is None:
                return None
            self._open.move_to_end(ref)
            entry.users += 1
            return entry

    def release(self, entry: _OpenStore) -> None:
        with self._lock:
            entry.users -= 1

    def wrote(self, entry: _OpenStore, quads: int) -> bool:
        """Count quads written to a leased store; True, once per `flush_every`, when it is due a flush."""
        with self._lock:
            entry.unflushed += quads
            if entry.unflushed < self.flush_every:
                return False
            entry.unflushed = 0
            return True

    def _evict(self) -> None:
        idle = [ref for ref, entry in self._open.items() if entry.users == 0]
        for ref in idle[:max(0, len(self._open) - self.max_open)]:
            # Dropping the last reference closes RocksDB; _leased makes sure no traceback keeps one.
            self._open.pop(ref).store = None

    def broke(self, entry: _OpenStore) -> None:
        """Mark a store that met a full disk. RocksDB keeps that background error, refusing every write,
        for as long as the store stays open; reads still work, so it is reopened only for a write."""
        with self._lock:
            entry.broken = True

    def _close_broken(self, ref: CollectionRef, entry: _OpenStore) -> None:
        """Close a broken store so that it can be opened afresh: once space is back (opening writes
        files too) and no one else uses it (RocksDB's lock); until then the write waits (OutOfSpace)."""
        if entry.users or free_bytes(self.path(ref)) < REOPEN_FREE_BYTES:
            raise _out_of_space(ref)
        self._open.pop(ref).store = None
        log.info("oxigraph store %s: reopening after a full disk", ref)

    def drop(self, ref: CollectionRef) -> None:
        with self._lock:
            entry = self._open.get(ref)
            if entry is not None:
                if entry.users:
                    raise TransientError(f"collection {ref} is in use by a running query; retry the drop")
                self._open.pop(ref).store = None
            shutil.rmtree(self.path(ref), ignore_errors=True)

    def close_all(self) -> None:
        """Close every idle store; one still in use closes when its user releases it."""
        with self._lock:
            for entry in self._open.values():
                if not entry.users:
                    entry.store = None
            self._open.clear()

    def collections(self, user: str) -> list[str]:
        folder = self.root / user
        return sorted(p.name for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []


_CACHES: dict[Path, _StoreCache] = {}
_CACHES_LOCK = threading.Lock()


def _join_cache(root: Path, max_open: int, flush_every: int) -> _StoreCache:
    """The process's one cache for `root`: RocksDB opens a directory once per process, and in the
    all-in-one launcher the triples writer and the query processors share one data_dir."""
    key = root.resolve()
    with _CACHES_LOCK:
        cache = _CACHES.get(key)
        if cache is None:
            cache = _CACHES[key] = _StoreCache(key, max_open, flush_every)
        cache.owners += 1
        return cache


def _leave_cache(cache: _StoreCache) -> None:
    with _CACHES_LOCK:
        cache.owners -= 1
        if cache.owners == 0:
            cache.close_all()
            _CACHES.pop(cache.root, None)


@dataclass(eq=False)
class _Stop:
    """Set by the waiting side when it gives up; a plain flag, since a lock would block the event loop."""

    requested: bool = False


INLINE_LIMIT = 100  # pattern lookups this small run on the event loop when their store is open


class OxigraphTripleStore:
    """TripleStore on pyoxigraph, on disk under `root`.

    SPARQL sees the collection's default graph as its default graph and every named graph
    (urn:graph:source, urn:graph:retrieval…) through GRAPH, which is pyoxigraph's own default
    (not `use_default_graph_as_union`): `SELECT * { ?s ?p ?o }` returns core facts only, and
    provenance stays out of the way until a query asks for it.
    """

    def __init__(self, root: Path, *, max_open: int = 16, query_threads: int = 4,
                 flush_every: int = FLUSH_EVERY) -> None:
        """`max_open` bounds the stores kept open and `flush_every` the quads a store holds in memory
        before its memtables are flushed to disk (the first instance on a root sets both for the process)."""
        self._root = Path(root)
        self._max_open = max_open
        self._flush_every = flush_every
        self._joined: _StoreCache | None = None
        self._join_lock = threading.Lock()
        # Queries get threads of their own: one that outlives its timeout then holds up
        # only other queries, not writes and pattern lookups on the default executor.
        self._query_threads = ThreadPoolExecutor(query_threads, thread_name_prefix="oxigraph-query")
        self._nothing = ox.Store()  # what reads of a collection that does not exist run against

    async def add(self, ref: CollectionRef, triples: Iterable[Triple]) -> int:
        given = list(triples)

        def write(store: ox.Store) -> int:
            store.extend([quad_to_ox(t) for t in given])
            return len(given)

        return await self._write(ref, write, create=True)

    async def add_nquads(self, ref: CollectionRef, nquads: str) -> int:
        """Parse with pyoxigraph and write, in bulk above BULK_THRESHOLD lines and in one transaction below.

        Blank node labels are kept, as in `add`, so re-sending a batch changes nothing. A
        syntax error raises ValueError; in a bulk write the quads before it may already be
        stored (the bulk loader is not transactional), which a corrected re-send repairs.
        """
        return await self._write(ref, partial(_load, nquads=nquads), create=True)

    async def match(self, ref: CollectionRef, s: Term | None = None, p: IriTerm | None = None,
                    o: Term | None = None, g: str | None = DEFAULT_GRAPH, limit: int = 10_000) -> list[Triple]:
        if isinstance(s, (LiteralTerm, TripleTerm)):
            return []  # RDF 1.2 has no such subjects, and pyoxigraph refuses them in a pattern
        pattern = (None if s is None else to_ox(s), None if p is None else to_ox(p), None if o is None else to_ox(o),
                   None if g == ALL_GRAPHS else graph_to_ox(g))

        def lookup(store: ox.Store) -> list[Triple]:
            return [quad_from_ox(q) for q in islice(store.quads_for_pattern(*pattern), max(limit, 0))]

        if limit <= INLINE_LIMIT and self._joined is not None:
            # Every pattern is served by an index, so a small limit bounds the work to tens of
            # microseconds: cheaper on the event loop than a hop to a worker thread and back.
            entry = self._joined.lease_if_open(ref)
            if entry is not None:
                try:
                    return lookup(entry.store)
                finally:
                    self._joined.release(entry)
        return await self._run(ref, lookup)

    async def around(self, ref: CollectionRef, nodes: Sequence[str], limit: int = 100,
                     g: str | None = DEFAULT_GRAPH) -> list[Triple]:
        """Every node's outgoing and incoming triples in one worker-thread call (see TripleStore.around)."""
        named = [iri_to_ox(node) for node in dict.fromkeys(nodes)]
        graph = None if g == ALL_GRAPHS else graph_to_ox(g)

        def lookup(store: ox.Store) -> list[Triple]:
            found: dict[ox.Quad, None] = {}
            for node in named:
                found.update(dict.fromkeys(islice(store.quads_for_pattern(node, None, None, graph), limit)))
                found.update(dict.fromkeys(islice(store.quads_for_pattern(None, None, node, graph), limit)))
            return [quad_from_ox(q) for q in found]

        return await self._run(ref, lookup) if named else []

    async def query(self, ref: CollectionRef, sparql: str, *, limit: int = 10_000,
                    timeout: float = 30.0) -> SparqlResult:
        """Run a read-only query; updates, SERVICE, bad syntax and timeouts raise QueryError.

        pyoxigraph offers no way to cancel a running query. On timeout the worker is told to
        stop, which it does at the next result row; a query that computes long before its
        first row (ORDER BY, aggregates, a join that yields nothing) finishes in the background,
        holding one of `query_threads` until then.
        """
        refuse_service(sparql)
        stop = _Stop()
        loop = asyncio.get_running_loop()
        work = loop.run_in_executor(self._query_threads, self._leased, ref, False,
                                    partial(_evaluate, sparql=sparql, limit=limit, stop=stop))
        try:
            return await asyncio.wait_for(work, timeout)
        except TimeoutError:
            raise QueryError(f"SPARQL query timed out after {timeout:g} s") from None
        finally:
            stop.requested = True

    async def remove(self, ref: CollectionRef, triples: Iterable[Triple]) -> int:
        given = list(triples)
        return await self._write(ref, lambda store: _remove(store, [quad_to_ox(t) for t in given]))

    async def count(self, ref: CollectionRef, g: str | None = ALL_GRAPHS) -> int:
        return await self._run(ref, partial(_count, g=g))

    async def collections(self, user: str) -> list[str]:
        # The name rule of CollectionRef keeps `user` from naming a path outside root.
        owner = CollectionRef(user, "probe").user
        return await asyncio.to_thread(lambda: self._cache().collections(owner))

    async def drop(self, ref: CollectionRef) -> None:
        """Close the collection's store and remove its directory; TransientError while a query still runs on it."""
        await asyncio.to_thread(lambda: self._cache().drop(ref))

    async def aclose(self) -> None:
        await asyncio.to_thread(self._leave)

    def _cache(self) -> _StoreCache:
        with self._join_lock:
            if self._joined is None:
                self._joined = _join_cache(self._root, self._max_open, self._flush_every)
            return self._joined

    def _leave(self) -> None:
        self._query_threads.shutdown(wait=False, cancel_futures=True)
        with self._join_lock:
            joined, self._joined = self._joined, None
        if joined is not None:
            _leave_cache(joined)

    async def _run(self, ref: CollectionRef, work: Callable[[ox.Store], T], *, create: bool = False) -> T:
        return await asyncio.to_thread(self._leased, ref, create, work)

    async def _write(self, ref: CollectionRef, work: Callable[[ox.Store], int], *, create: bool = False) -> int:
        """Run a write that returns how many quads it wrote; the store is flushed once enough have."""
        return await asyncio.to_thread(self._leased, ref, create, work, True)

    def _leased(self, ref: CollectionRef, create: bool, work: Callable[[ox.Store], T], write: bool = False) -> T:
        """Run `work` on the collection's store (an empty one if it does not exist), in a worker thread."""
        cache = self._cache()
        try:
            entry = cache.lease(ref, create, write)
        except OSError as exc:
            raise _cannot_open(ref, exc) from None
        try:
            result = work(entry.store if entry else self._nothing)
            if write and entry and cache.wrote(entry, result):
                _flush(entry.store, ref)
            return result
        except BaseException as exc:
            # A traceback keeps the frames' locals, the store among them, alive; a store left
            # open that way could never be reopened after a drop (RocksDB's lock).
            traceback.clear_frames(exc.__traceback__)
            if entry and is_out_of_space(exc):
                cache.broke(entry)
                raise _out_of_space(ref) from None
            if isinstance(exc, OSError):
                raise TransientError(f"oxigraph store {ref}: {exc}") from None
            raise
        finally:
            if entry:
                cache.release(entry)


def _flush(store: ox.Store, ref: CollectionRef) -> None:
    """Write the memtables out. The write itself is already safe in RocksDB's log, so a failed flush
    is only logged: the next one, or RocksDB's own, catches up."""
    try:
        store.flush()
    except OSError as exc:
        log.warning("oxigraph store %s: flush failed: %s", ref, exc)


def _load(store: ox.Store, nquads: str) -> int:
    read = 0

    def counted() -> Iterator[ox.Quad]:
        nonlocal read
        for quad in parse_nquads(nquads):
            read += 1
            yield quad

    if nquads.count("\n") >= BULK_THRESHOLD:
        store.bulk_extend(counted())
    else:
        store.extend(counted())
    return read


def _remove(store: ox.Store, quads: list[ox.Quad]) -> int:
    existed = [q for q in dict.fromkeys(quads) if q in store]
    for quad in existed:
        store.remove(quad)
    return len(existed)


def _count(store: ox.Store, g: str | None) -> int:
    if g == ALL_GRAPHS:
        return len(store)
    [solution] = store.query("SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }", default_graph=graph_to_ox(g))
    return int(solution["n"].value)


def _evaluate(store: ox.Store, sparql: str, limit: int, stop: _Stop) -> SparqlResult:
    try:
        result = store.query(sparql)
    except SyntaxError as exc:
        raise QueryError(explain_syntax_error(sparql, exc)) from None
    if isinstance(result, ox.QueryBoolean):
        return SparqlResult(kind="boolean", boolean=bool(result))
    if isinstance(result, ox.QuerySolutions):
        names = [v.value for v in result.variables]
        rows, truncated = _take(result, limit, stop, lambda solution: {
            name: from_ox(value) for name, value in zip(names, solution) if value is not None})
        return SparqlResult(kind="bindings", variables=names, rows=rows, truncated=truncated)
    triples, truncated = _take(result, limit, stop, triple_from_ox)
    return SparqlResult(kind="triples", triples=triples, truncated=truncated)


def _take(results: Iterable[object], limit: int, stop: _Stop, convert: Callable[[object], T]) -> tuple[list[T], bool]:
    """Up to `limit` converted results and whether more existed; pyoxigraph evaluates lazily, so
    stopping early also stops the work."""
    taken: list[T] = []
    for item in results:
        if stop.requested:
            raise QueryError("SPARQL query abandoned by its caller")
        if len(taken) == limit:
            return taken, True
        taken.append(convert(item))
    return taken, False


# A SPARQL lexer just good enough to find keywords: strings, IRIs and comments are skipped,
# and prefixed names, variables, blank nodes and language tags are consumed whole, so
# `"DELETE"`, `ex:delete` or `?service` are not keywords while `.SERVICE` still is.
_TOKEN = re.compile(r'''
    "{3}(?:(?:"|"")?(?:[^"\\]|\\.))*"{3} | '{3}(?:(?:'|'')?(?:[^'\\]|\\.))*'{3}
  | "(?:[^"\\\n\r]|\\.)*" | '(?:[^'\\\n\r]|\\.)*'
  | <(?:[^<>"{}|^`\\\x00-\x20]|\\u[0-9A-Fa-f]{4}|\\U[0-9A-Fa-f]{8})*>
  | \#[^\n\r]*
  | [?$]\w+ | @[A-Za-z][\w-]*
  | [\w.-]*:(?:[\w.:%-]|\\[_~.\-!$&'()*+,;=/?\#@%])*
  | (?P<word>[A-Za-z]\w*)
''', re.VERBOSE | re.DOTALL)

UPDATE_KEYWORDS = frozenset({"INSERT", "DELETE", "LOAD", "CLEAR", "DROP", "CREATE", "ADD", "MOVE", "COPY", "WITH"})


def keywords(sparql: str) -> list[str]:
    """The bare words of a SPARQL text, upper-cased, in order.

    >>> keywords('PREFIX ex: <urn:x#> SELECT ?delete WHERE { ?s ex:DELETE "DELETE" } # DELETE')
    ['PREFIX', 'SELECT', 'WHERE']
    """
    return [m["word"].upper() for m in _TOKEN.finditer(sparql) if m["word"]]


def refuse_service(sparql: str) -> None:
    """Refuse federated queries: pyoxigraph would fetch any SERVICE URL over HTTP, and has no switch for it."""
    if "SERVICE" in keywords(sparql):
        raise QueryError("SERVICE (federated query) is not allowed: a query reads only its collection")


def explain_syntax_error(sparql: str, exc: SyntaxError) -> str:
    """The message for a text pyoxigraph's query parser refused: an update is refused as such.

    The parser's grammar has no update forms, so it alone keeps writes out; the words here
    only pick the message, e.g. for `INSERT DATA {…}` instead of "expected CONSTRUCT".
    """
    form = next((w for w in keywords(sparql) if w not in ("BASE", "PREFIX")), "")
    if form in UPDATE_KEYWORDS:
        return f"SPARQL updates ({form}) are not allowed: queries are read-only"
    return f"SPARQL syntax error: {exc}"
