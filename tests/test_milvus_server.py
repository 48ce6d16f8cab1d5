"""A Milvus server by URI: `milvus-lite server` on a loopback port stands in for Milvus (the same
gRPC protocol, no Docker). Ingest, collections, research and batch run against it, two
processes at once, with the same chunks and ranking as a Milvus Lite file, and the store keeps
within what a server limits."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from starlette.testclient import TestClient
from test_serve import run_events

from deepsift.config import Settings
from deepsift.deps import Deps
from deepsift.llm.chat import chat_model
from deepsift.llm.embedders import get_embedder
from deepsift.serve.app import create_app
from deepsift.store import Store, StoredChunk

from conftest import CORPUS, run_cli
from fake_openai import FakeOpenAI
from scripted import ScriptedResearcher

QUERY_CAP = 16_384  # a Milvus server's most rows for one query (its topK and result window)


def _cli(milvus_server: str, data: Path, *args: str, **env: str) -> subprocess.Popen:
    """`deepsift ARGS` in a child process against the server, started, not waited for."""
    environment = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(data),
        "DEEPSIFT_DATA_DIR": str(data),
        "DEEPSIFT_MILVUS_URI": milvus_server,
        **env,
    }
    data.mkdir(parents=True, exist_ok=True)
    return subprocess.Popen(
        [sys.executable, "-m", "deepsift", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment,
        cwd=data.parent,
    )


def _finished(process: subprocess.Popen) -> tuple[int, str, str]:
    out, err = process.communicate(timeout=300)
    return process.returncode, out, err


def _ingest_science(server: str, data: Path) -> None:
    code, _, err = _finished(
        _cli(server, data, "ingest", str(CORPUS / "science"), "--collection", "science")
    )
    assert code == 0, err


def _chunks(store: Store, collection: str) -> dict[str, tuple[str, int, str]]:
    """Every chunk of a collection: id -> (source's file name, position, text)."""
    rows = store._rows(collection, "", ["id", "source", "position", "text"])
    return {r["id"]: (Path(r["source"]).name, r["position"], r["text"]) for r in rows}


@pytest.fixture(scope="module")
def lite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample corpus ingested into a Milvus Lite file: what the server must match."""
    data = tmp_path_factory.mktemp("lite") / "data"
    for name in ("science", "operations"):
        result = run_cli("ingest", str(CORPUS / name), "--collection", name, data=data)
        assert result.returncode == 0, result.stderr
    return data


def test_an_ingest_and_a_research_at_once_share_the_server_and_lose_nothing(
    milvus_server, lite, tmp_path
):
    with FakeOpenAI(ScriptedResearcher()) as llm:
        model = {"DEEPSIFT_LLM_BASE_URL": llm.url, "DEEPSIFT_LLM_API_KEY": "k"}
        _ingest_science(milvus_server, tmp_path / "a")
        # A second process ingests while a third researches: a Lite file would refuse one.
        ingesting = _cli(
            milvus_server,
            tmp_path / "b",
            "ingest",
            str(CORPUS / "operations"),
            "--collection",
            "operations",
        )
        researching = _cli(
            milvus_server,
            tmp_path / "c",
            "research",
            "Why was Kestrel Works built?",
            "--collections",
            "science",
            "--json",
            **model,
        )
        ingested, researched = _finished(ingesting), _finished(researching)
        again = _finished(
            _cli(
                milvus_server,
                tmp_path / "d",
                "ingest",
                str(CORPUS / "operations"),
                "--collection",
                "operations",
            )
        )
        listed = _finished(_cli(milvus_server, tmp_path / "e", "collections"))

    assert ingested[0] == 0, ingested[2]
    assert researched[0] == 0, researched[2]
    assert "in use by another process" not in ingested[2] + researched[2]
    assert json.loads(researched[1])["sources"], "the research cited nothing from the server"
    assert again[0] == 0 and "unchanged" in again[2]
    assert "science" in listed[1] and "operations" in listed[1]
    with (
        Store(Settings(milvus_uri=milvus_server)) as remote,
        Store(Settings(data_dir=lite)) as local,
    ):
        for name in ("science", "operations"):
            # The same chunk ids, positions and texts as a Lite ingest: none lost, none twice.
            assert _chunks(remote, name) == _chunks(local, name)


def test_a_search_ranks_the_same_on_the_server_as_on_the_lite_file(milvus_server, lite, tmp_path):
    _ingest_science(milvus_server, tmp_path / "a")
    embedder = get_embedder(Settings(data_dir=tmp_path))
    questions = [
        "Why was Kestrel Works built?",
        "phosphorus levels in Lake Veldmere after treatment",
        "buffer strip trial results",
    ]
    with (
        Store(Settings(milvus_uri=milvus_server)) as remote,
        Store(Settings(data_dir=lite)) as local,
    ):
        for question in questions:
            vector = embedder.embed_queries([question])[0]
            served = [c.id for c in remote.search("science", question, vector, 8)]
            filed = [c.id for c in local.search("science", question, vector, 8)]
            assert served == filed and served


def test_two_batches_at_once_answer_every_question(milvus_server, tmp_path):
    _ingest_science(milvus_server, tmp_path / "a")
    questions = tmp_path / "q.jsonl"
    questions.write_text(
        "".join(
            json.dumps({"id": f"q{n}", "question": f"What did Kestrel Works cost? ({n})"}) + "\n"
            for n in range(3)
        )
    )
    with FakeOpenAI(ScriptedResearcher()) as llm:
        model = {"DEEPSIFT_LLM_BASE_URL": llm.url, "DEEPSIFT_LLM_API_KEY": "k"}
        batches = [
            _cli(
                milvus_server,
                tmp_path / name,
                "batch",
                str(questions),
                "-o",
                str(tmp_path / f"{name}.jsonl"),
                "--collections",
                "science",
                **model,
            )
            for name in ("one", "two")
        ]
        ended = [_finished(b) for b in batches]

    for name, (code, _, err) in zip(("one", "two"), ended, strict=True):
        assert code == 0, err
        rows = [json.loads(line) for line in (tmp_path / f"{name}.jsonl").read_text().splitlines()]
        assert sorted(r["id"] for r in rows) == ["q0", "q1", "q2"]
        assert all(r["error"] is None and r["sources"] for r in rows)


class _Capped:
    """The server's client, held to a Milvus server's cap on rows a query returns (the
    milvus-lite server does not enforce it)."""

    def __init__(self, client):
        self._client = client

    def query(self, *args, **kwargs):
        rows = self._client.query(*args, **kwargs)
        if len(rows) > QUERY_CAP:
            raise AssertionError(
                f"a query returned {len(rows)} rows: a server caps it at {QUERY_CAP}"
            )
        return rows

    def __getattr__(self, name):
        return getattr(self._client, name)


class _Fixed:
    name, dim = "fixed", 4


def test_a_document_of_more_chunks_than_one_query_returns_is_listed_and_replaced_whole(
    milvus_server,
):
    many = QUERY_CAP + 616
    with Store(Settings(milvus_uri=milvus_server)) as store:
        store._client = _Capped(store._client)
        store.ensure("long_document", "one long document", _Fixed())

        def chunks(version: str, count: int) -> list[StoredChunk]:
            return [
                StoredChunk(
                    id=f"{version}-{n}",
                    text=f"passage {n} of {version}",
                    vector=[1.0, n, 0.0, 1.0],
                    source="/long.md",
                    title="long",
                    position=n,
                    doc_hash=version,
                )
                for n in range(count)
            ]

        old = chunks("old", many)
        for start in range(0, many, 2000):
            store.write_chunks("long_document", old[start : start + 2000])
        store.complete_document("long_document", "/long.md", {c.id for c in old}, old[0])
        store.flush("long_document")
        listed = len(store._ids_of("long_document", "/long.md"))
        # A new version of 10 chunks replaces all of the old one's.
        new = chunks("new", 10)
        store.write_chunks("long_document", new)
        store.complete_document("long_document", "/long.md", {c.id for c in new}, new[0])
        store.flush("long_document")
        remaining = store.count("long_document")
        documents = store.documents("long_document")
        store.drop("long_document")

    assert listed == many
    assert remaining == 10 and documents == {"/long.md": "new"}


def test_serve_answers_from_the_server_while_a_research_process_uses_it(milvus_server, tmp_path):
    _ingest_science(milvus_server, tmp_path / "a")
    with FakeOpenAI(ScriptedResearcher()) as llm:
        settings = Settings(
            data_dir=tmp_path / "serve",
            milvus_uri=milvus_server,
            llm_base_url=llm.url,
            llm_api_key="k",
        )
        deps = Deps(settings, Store(settings), get_embedder(settings), chat_model(settings))
        model = {"DEEPSIFT_LLM_BASE_URL": llm.url, "DEEPSIFT_LLM_API_KEY": "k"}
        researching = _cli(
            milvus_server,
            tmp_path / "b",
            "research",
            "What did Kestrel Works cost?",
            "--collections",
            "science",
            "--json",
            **model,
        )
        with TestClient(create_app(settings, deps), base_url="http://127.0.0.1:8000") as client:
            asked = {"question": "Why was Kestrel Works built?", "collections": ["science"]}
            started = client.post("/api/runs", json=asked)
            assert started.status_code == 202, started.text
            events = run_events(client, started.json()["thread_id"])
        researched = _finished(researching)
        deps.store.close()

    result = events[-1][1]
    assert result["status"] == "done" and result["sources"], result
    assert researched[0] == 0, researched[2]
    assert json.loads(researched[1])["sources"]
