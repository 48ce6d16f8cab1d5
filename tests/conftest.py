import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from deepsift.config import Settings  # noqa: E402
from deepsift.llm.local_model import free_port

from fake_openai import FakeOpenAI  # noqa: E402
from scripted import ScriptedResearcher  # noqa: E402

ROOT = Path(__file__).parent.parent
CORPUS = ROOT / "examples" / "corpus"
MILVUS_SERVER = Path(sys.executable).parent / "milvus-lite"


def run_cli(*args: str, data: Path, stdin: str = "", **env: str) -> subprocess.CompletedProcess:
    """`deepsift ARGS` in a fresh process whose data dir is `data`, with only `env` set and
    `stdin` as its input."""
    environment = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(data),
        "DEEPSIFT_DATA_DIR": str(data),
        **env,
    }
    return subprocess.run(
        [sys.executable, "-m", "deepsift", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=environment,
        timeout=300,
        cwd=data.parent,
    )


@pytest.fixture(autouse=True)
def _isolated_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test reads the developer's DEEPSIFT_* settings, keys or deepsift.toml."""
    for key in list(os.environ):
        if key.startswith("DEEPSIFT_") or key in ("OPENAI_API_KEY",):
            monkeypatch.delenv(key)
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def scripted_llm():
    with FakeOpenAI(ScriptedResearcher()) as server:
        yield server


@pytest.fixture
def settings(tmp_path: Path, scripted_llm: FakeOpenAI) -> Settings:
    return Settings(data_dir=tmp_path / "data", llm_base_url=scripted_llm.url, llm_api_key="test")


@pytest.fixture(scope="session")
def sample_store(tmp_path_factory: pytest.TempPathFactory):
    """The sample corpus ingested once into its two collections, in a fresh Milvus Lite file."""
    from deepsift.ingest.pipeline import ingest
    from deepsift.llm.embedders import get_embedder
    from deepsift.store import Store

    settings = Settings(data_dir=tmp_path_factory.mktemp("corpus"))
    store = Store(settings)
    embedder = get_embedder(settings)
    for name in ("science", "operations"):
        ingest([CORPUS / name], name, store, embedder, settings, description=f"{name} documents")
    yield store
    store.close()


@pytest.fixture
def deps(settings: Settings, sample_store):
    """What a research run needs: the sample corpus and the scripted model."""
    from deepsift.deps import Deps
    from deepsift.llm.chat import chat_model
    from deepsift.llm.embedders import get_embedder

    return Deps(settings, sample_store, get_embedder(settings), chat_model(settings))


@pytest.fixture(scope="session")
def milvus_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The URI of a Milvus server (`milvus-lite server`: the Milvus gRPC protocol, no Docker) on
    a free loopback port; tests sharing it use collection names of their own."""
    if not MILVUS_SERVER.exists():
        pytest.skip(
            f"{MILVUS_SERVER} not found: milvus-lite's server comes with the milvus-lite package"
        )
    port = free_port()
    data = tmp_path_factory.mktemp("milvus-server")
    command = [str(MILVUS_SERVER), "server", "--data-dir", str(data), "--host", "127.0.0.1"]
    process = subprocess.Popen(  # in its own folder: no test's clean-up takes it for its own
        [*command, "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        cwd=data,
    )
    deadline = time.monotonic() + 60
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                pytest.fail(f"milvus-lite server did not start: {process.stderr.read()!r}")
            time.sleep(0.2)
    yield f"http://127.0.0.1:{port}"
    process.terminate()
    process.wait(30)
    process.stderr.close()
