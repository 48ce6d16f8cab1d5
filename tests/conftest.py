import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from deepsift.config import Settings  # noqa: E402

from fake_openai import FakeOpenAI  # noqa: E402
from scripted import ScriptedResearcher  # noqa: E402

ROOT = Path(__file__).parent.parent
CORPUS = ROOT / "examples" / "corpus"


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
    from deepsift.llm.models import get_embedder
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
    from deepsift.llm.models import chat_model, get_embedder

    return Deps(settings, sample_store, get_embedder(settings), chat_model(settings))
