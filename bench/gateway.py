"""Gateway benchmark: concurrent WebSocket clients (10, 100 by default) asking GraphRAG questions
through `/api/v1/socket`, with the instant LLM stub; queries/s, p50/p95 latency, and the gateway's
memory per open socket. Prints figures; never asserts on timing.

How it runs
  * The whole stack is `tg-launch` in a child process (inproc bus, stores in a temporary directory,
    offline extraction, the bundled embedding model), with TG_LLM_URL pointing at the instant model
    server of bench/graph_rag.py (another child process), so every query makes its LLM calls: three
    for GraphRAG, one for Document RAG, and for the agent two of its own around one GraphRAG run.
  * The bundled corpus is loaded through the gateway and extraction waited for.
  * For each client count, that many SocketClients connect (each on its own WebSocket, authenticated),
    then each asks `--per-client` questions one after another (streaming, explain on); latency is
    from sending a request to its `complete` frame. Queries/s = all queries / wall time of the round.
  * The same rounds with `ping` (a trivial service) show what the gateway and bus cost on their own.
  * Memory: the gateway process's RSS (/proc/<pid>/status) before and after opening `--idle-sockets`
    authenticated idle sockets, divided by their number.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from graph_rag import StubProcess, pct  # the instant model server and the percentile of the GraphRAG bench

from tracegraph.cli.api import Api
from tracegraph.cli.library_upload import add_document, process, wait_for_extraction
from tracegraph.cli.socket_client import SocketClient

CORPUS = Path(__file__).resolve().parents[1] / "launch" / "corpus"
QUESTIONS = ["What does Helios Grid depend on?", "Who runs Helios Grid?", "What does Corvid Analytics do?",
             "Which systems does Orbis Systems build?", "What supplies water to Sable Water Authority?"]



def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


async def launch(data_dir: Path, port: int, llm_url: str) -> asyncio.subprocess.Process:
    env = {**os.environ, "TG_LLM_URL": llm_url, "TG_LLM_MODEL": "stub-llm", "TG_EXTRACTOR": "offline",
           "TG_LOG_LEVEL": "WARNING"}
    launcher = Path(sys.executable).parent / "tg-launch"
    proc = await asyncio.create_subprocess_exec(str(launcher), "--data-dir", str(data_dir), "--gateway-port",
                                                str(port), env=env, stdout=asyncio.subprocess.DEVNULL,
                                                stderr=asyncio.subprocess.DEVNULL)
    api = Api(f"http://127.0.0.1:{port}/")
    for _ in range(300):
        try:
            if "default" in (await api.flow("list-flows")).get("flow-ids", []):
                return proc
        except Exception:
            pass
        await asyncio.sleep(0.2)
    raise RuntimeError("tg-launch did not come up")


async def load_corpus(api: Api) -> None:
    ids = []
    for path in sorted(CORPUS.glob("*.md")):
        meta = await add_document(api, path, collection="default")
        await process(api, meta["id"], "default", "default")
        ids.append(meta["id"])
    await wait_for_extraction(api, "default", ids, "default", 300)


def graph_rag(question: str) -> tuple[str, dict]:
    return "graph-rag", {"query": question, "streaming": True}


def document_rag(question: str) -> tuple[str, dict]:
    return "document-rag", {"query": question, "streaming": True}


def agent(question: str) -> tuple[str, dict]:
    return "agent", {"question": question, "streaming": True}


def ping(question: str) -> tuple[str, dict]:
    return "ping", {"text": question}


# Service → (request maker, LLM calls per query with the stub's script: the agent asks the graph once).
ANSWERING = {"graph-rag": (graph_rag, 3), "document-rag": (document_rag, 1), "agent": (agent, 2 + 3)}


async def one_client(url: str, requests: list[tuple[str, dict]], latencies: list[float]) -> None:
    async with SocketClient(url, timeout=300) as socket:
        for service, request in requests:
            started = time.perf_counter()
            async for _ in socket.stream(service, request, flow="default"):
                pass
            latencies.append(time.perf_counter() - started)


async def round_of(url: str, clients: int, per_client: int, kind=graph_rag) -> tuple[float, list[float]]:
    """Each client asks `per_client` questions in turn, all clients at once: (queries/s, latencies)."""
    latencies: list[float] = []
    started = time.perf_counter()
    await asyncio.gather(*(one_client(url, [kind(QUESTIONS[(c + q) % len(QUESTIONS)]) for q in range(per_client)],
                                      latencies) for c in range(clients)))
    return len(latencies) / (time.perf_counter() - started), latencies


def report(label: str, clients: int, rate: float, latencies: list[float]) -> None:
    ms = [x * 1000 for x in latencies]
    print(f"{label:>12} {clients:>8} {len(ms):>8} {rate:>8.1f} {statistics.median(ms):>8.1f} {pct(ms, 0.95):>8.1f} "
          f"{max(ms):>8.1f}")


async def memory_per_socket(url: str, pid: int, sockets: int) -> float:
    before = rss_kib(pid)
    opened = []
    try:
        for _ in range(sockets):
            opened.append(await SocketClient(url).__aenter__())
        await asyncio.sleep(1.0)
        after = rss_kib(pid)
    finally:
        await asyncio.gather(*(s.__aexit__() for s in opened))
    return (after - before) / sockets


async def run(args: argparse.Namespace) -> None:
    stub = await StubProcess().start(384)
    port = args.port
    with tempfile.TemporaryDirectory() as data:
        proc = await launch(Path(data), port, stub.base_url)
        url = f"http://127.0.0.1:{port}/"
        try:
            print(f"stack: tg-launch pid {proc.pid}, gateway {url}, LLM stub {stub.base_url}")
            t = time.perf_counter()
            await load_corpus(Api(url))
            print(f"corpus loaded and extracted in {time.perf_counter() - t:.1f}s")
            await stub.script(ANSWERING["graph-rag"][1] * 5)
            await round_of(url, 1, 5)  # warm-up
            print(f"\n{'service':>12} {'clients':>8} {'queries':>8} {'q/s':>8} {'p50 ms':>8} {'p95 ms':>8} "
                  f"{'max ms':>8}")
            for service in args.services:
                kind, calls = ANSWERING[service]
                for clients in args.clients:
                    per_client = max(1, args.queries // clients)
                    await stub.script(calls * clients * per_client)
                    report(service, clients, *await round_of(url, clients, per_client, kind))
            for clients in args.clients:  # the gateway and bus alone: a trivial service behind the same socket path
                report("ping", clients, *await round_of(url, clients, max(1, args.pings // clients), ping))
            per_socket = await memory_per_socket(url, proc.pid, args.idle_sockets)
            print(f"\nmemory per open socket: {per_socket:.1f} KiB (gateway RSS over {args.idle_sockets} "
                  f"idle authenticated sockets)")
        finally:
            proc.terminate()
            await proc.wait()
            await stub.close()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--clients", type=lambda s: [int(x) for x in s.split(",")], default=[10, 100],
                   help="comma-separated client counts [10,100]")
    p.add_argument("--queries", type=int, default=200, help="queries per round, split over the clients [200]")
    p.add_argument("--services", type=lambda s: s.split(","), default=["graph-rag", "document-rag", "agent"],
                   help="answering services to measure [graph-rag,document-rag,agent]")
    p.add_argument("--pings", type=int, default=5000, help="ping requests per round, for the gateway's own "
                   "overhead [5000]")
    p.add_argument("--idle-sockets", type=int, default=500, help="sockets opened for the memory figure [500]")
    p.add_argument("--port", type=int, default=18888, help="gateway port for the child stack [18888]")
    asyncio.run(run(p.parse_args()))


if __name__ == "__main__":
    main()
