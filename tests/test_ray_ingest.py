"""`deepsift ingest --ray local`: loading, chunking and embedding on a Ray runtime on this
machine give exactly what a local ingest gives, and a rerun adds nothing."""

import sys

import pytest

from deepsift.config import Settings
from deepsift.errors import UserError
from deepsift.ingest.pipeline import ingest
from deepsift.llm.embedders import get_embedder
from deepsift.store import Store

from conftest import CORPUS, run_cli

pytest.importorskip("ray", reason="the ray extra is not installed: pip install -e '.[ray]'")


def _chunks(store: Store, collection: str) -> dict[str, tuple]:
    """Every chunk: id -> (source, position, title, text, doc_hash, vector rounded)."""
    fields = ["id", "source", "position", "title", "text", "doc_hash", "dense"]
    rows = list(store._rows(collection, "", fields))
    return {
        r["id"]: (*(r[f] for f in fields[1:6]), tuple(round(v, 4) for v in r["dense"]))
        for r in rows
    }


def test_a_ray_ingest_stores_what_a_local_one_does_and_a_rerun_adds_nothing(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    for path in (CORPUS / "science").iterdir():
        (folder / path.name).write_bytes(path.read_bytes())
    (folder / "empty.md").write_text("")  # a file that fails, on a worker
    settings = Settings(data_dir=tmp_path / "local", store_wait=30)
    with Store(settings) as store:
        ingest([folder], "docs", store, get_embedder(settings), settings)

    first = run_cli("ingest", str(folder), "--collection", "docs", "--ray", data=tmp_path / "ray")
    again = run_cli("ingest", str(folder), "--collection", "docs", "--ray", data=tmp_path / "ray")
    (folder / "empty.md").unlink()
    changed = next(folder.glob("*.md"))
    changed.write_text(changed.read_text() + "\n\nA paragraph added later.\n")
    third = run_cli(
        "ingest",
        str(folder),
        "--collection",
        "docs",
        "--ray",
        "local",
        "--prune",
        data=tmp_path / "ray",
    )

    assert first.returncode == 0, first.stderr
    assert "skipped" in first.stderr and "empty.md" in first.stderr
    assert _summary(first.stderr)[:5] == ["5", "0", "0", "0", "1"]  # added ... failed
    assert _summary(again.stderr)[:6] == ["0", "0", "5", "0", "1", "0"]  # nothing new
    assert _summary(third.stderr)[:2] == ["0", "1"]  # one updated
    with Store(settings) as store:
        ingest([folder], "docs", store, get_embedder(settings), settings, prune=True)
        locally = _chunks(store, "docs")
    # The last CLI process's Milvus Lite may still be letting go of its file.
    with Store(Settings(data_dir=tmp_path / "ray", store_wait=30)) as store:
        assert _chunks(store, "docs") == locally


def _summary(stderr: str) -> list[str]:
    """The ingest table's counts: added, updated, unchanged, pruned, failed, new chunks."""
    row = [line for line in stderr.splitlines() if line.startswith("│")][-1]
    return [cell.strip() for cell in row.strip("│").split("│")]


def test_without_ray_the_flag_names_the_extra_in_one_line(monkeypatch):
    from deepsift.ingest import on_ray

    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(UserError, match=r"pip install 'deepsift\[ray\]'"):
        on_ray._ray()


class _SlowStartingRay:
    """Ray's API as `_connect` uses it, whose first runtimes miss Ray's start deadlines (the
    two ways Ray 2.60 says so)."""

    def __init__(self) -> None:
        self.starts = 0
        self.shutdowns = 0

    def is_initialized(self) -> bool:
        return False

    def init(self, address, **options) -> None:
        self.starts += 1
        if self.starts == 1:
            raise Exception("The current node timed out during startup. This could happen ...")
        if self.starts == 2:
            raise RuntimeError("Timed out waiting for file /tmp/ray/session_x/gcs_server_port")

    def shutdown(self) -> None:
        self.shutdowns += 1


def test_a_local_runtime_that_misses_ray_s_start_deadlines_is_started_again():
    from deepsift.ingest import on_ray

    ray = _SlowStartingRay()
    assert on_ray._connect(ray, "local") is True
    assert (ray.starts, ray.shutdowns) == (3, 2)

    # A cluster that does not answer is the user's to fix: no second try, the error as it is.
    joining = _SlowStartingRay()
    with pytest.raises(Exception, match="timed out during startup"):
        on_ray._connect(joining, "auto")
    assert joining.starts == 1
