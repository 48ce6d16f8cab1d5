"""One Milvus Lite file, many processes: while another process holds it, ingest, research and
collections are refused in one line (exit 2), or wait their turn when store_wait says so.

The commands run in this process (the lock is per process), beside a holder in a child."""

import logging
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from deepsift.cli import main

from conftest import CORPUS

HOLD = (
    "import sys; from pymilvus import MilvusClient; MilvusClient(uri=sys.argv[1]); "
    "print('open', flush=True); sys.stdin.readline()"
)


@pytest.fixture
def holder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[subprocess.Popen]:
    """A process holding DEEPSIFT_DATA_DIR's Milvus Lite file until its stdin is closed."""
    data = tmp_path / "data"
    data.mkdir()
    monkeypatch.setenv("DEEPSIFT_DATA_DIR", str(data))
    process = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(data / "milvus.db")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout.readline().strip() == "open"
    yield process
    process.stdin.close()
    process.wait(30)
    process.stdout.close()


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """`deepsift ARGV` in this process: its exit status, stdout and stderr."""
    with pytest.raises(SystemExit) as ended:
        main(argv)
    captured = capsys.readouterr()
    return ended.value.code, captured.out, captured.err


def test_ingest_research_and_collections_beside_a_holder_are_refused_in_one_line(
    holder, scripted_llm, monkeypatch, capsys
):
    monkeypatch.setenv("DEEPSIFT_LLM_BASE_URL", scripted_llm.url)
    monkeypatch.setenv("DEEPSIFT_LLM_API_KEY", "test")
    ended = {
        "ingest": _run(["ingest", str(CORPUS / "science"), "--collection", "c"], capsys),
        "research": _run(["research", "Why was Kestrel Works built?"], capsys),
    }
    monkeypatch.setenv("DEEPSIFT_STORE_WAIT", "1")
    ended["collections"] = _run(["collections"], capsys)

    data = Path.cwd() / "data"
    refusal = f"error: the Milvus Lite database {data}/milvus.db is in use by another process"
    for name, (code, _, stderr) in ended.items():
        assert code == 2, (name, stderr)
        (line,) = stderr.splitlines()
        assert line.startswith(refusal), (name, line)
    assert "(waited 1 s)" in ended["collections"][2]
    assert scripted_llm.requests == []


class ReleaseWhenWaiting(logging.Handler):
    """Lets the holder go when the store says it is waiting for it."""

    def __init__(self, holder: subprocess.Popen) -> None:
        super().__init__()
        self.holder, self.messages = holder, []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())
        self.holder.stdin.close()


def test_with_store_wait_a_command_waits_for_the_holder_then_runs(holder, monkeypatch, capsys):
    monkeypatch.setenv("DEEPSIFT_STORE_WAIT", "120")
    release = ReleaseWhenWaiting(holder)
    logging.getLogger("deepsift.store").addHandler(release)
    try:
        code, stdout, stderr = _run(["collections", "--json"], capsys)
    finally:
        logging.getLogger("deepsift.store").removeHandler(release)

    assert code == 0, stderr
    assert stdout.strip() == "[]"
    assert len(release.messages) == 1
    assert "is in use by another process: waiting up to 120 s" in release.messages[0]
