"""One ingest path (deepsift.api.ingest) for every front end: its events, and the web app, MCP
and the CLI storing the same chunks of one folder through it."""

from pathlib import Path

import anyio
import pytest
from mcp import Client
from starlette.testclient import TestClient

import deepsift.api.ingest as ingest_path
import deepsift.cli
from deepsift.api.ingest import OUTSIDE, ChunksDone, FileDone, Finished, Started, ingest
from deepsift.config import Settings
from deepsift.serve.app import create_app
from deepsift.serve.mcp import build_server
from deepsift.store import Store

NOTES = {
    "heron.md": "# Heron Lock\n\nThe Heron Lock was rebuilt in 2021 for 4 million.\n",
    "mill/kestrel.md": "# Kestrel Works\n\nKestrel Works removes phosphorus from the Orrin.\n",
    "veldmere.md": "# Lake Veldmere\n\nLake Veldmere's phosphorus fell by a third after 2019.\n",
}


def _notes(folder: Path) -> Path:
    for name, text in NOTES.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def _stored(data: Path, collection: str) -> list[tuple[str, str, str]]:
    """Every chunk of the collection in the data dir's store: (id, text, source), sorted."""
    with Store(Settings(data_dir=data)) as store:
        rows = store._client.query(
            collection, filter="", output_fields=["id", "text", "source"], limit=10_000
        )
    return sorted((row["id"], row["text"], row["source"]) for row in rows)


def test_the_events_say_start_each_file_and_the_end_and_a_failed_file_does_not_stop_the_rest(
    tmp_path,
):
    folder = _notes(tmp_path / "notes")
    (folder / "empty.md").write_text("")
    settings = Settings(data_dir=tmp_path / "data")
    events = []

    with Store(settings) as store:
        finished = ingest([folder], "notes", store, settings, on_event=events.append)
        documents = store.info("notes").documents

    assert events[0] == Started(files=4)
    assert events[-1] is finished and isinstance(finished, Finished)
    files = [event.result for event in events if isinstance(event, FileDone)]
    assert len(files) == 4 and files == finished.report.files
    assert sorted((Path(f.source).name, f.status) for f in files) == [
        ("empty.md", "failed"),
        ("heron.md", "added"),
        ("kestrel.md", "added"),
        ("veldmere.md", "added"),
    ]
    assert all(isinstance(event, FileDone | ChunksDone) for event in events[1:-1])
    chunked = [event for event in events if isinstance(event, ChunksDone)]
    assert {Path(event.source).name for event in chunked} == {name.split("/")[-1] for name in NOTES}
    assert finished.nothing == "" and documents == 3


def test_a_file_outside_the_allowed_folders_and_an_ingest_of_nothing_are_said_as_events(tmp_path):
    allowed, private = _notes(tmp_path / "allowed"), tmp_path / "private"
    private.mkdir()
    (private / "secret.md").write_text("# Secret\n\nThe safe's code is 4711.\n")
    (allowed / "link.md").symlink_to(private / "secret.md")
    (tmp_path / "blank").mkdir()
    (tmp_path / "blank" / "blank.md").write_text("")
    settings = Settings(data_dir=tmp_path / "data")
    events, nothing_events = [], []

    with Store(settings) as store:
        finished = ingest(
            [allowed], "notes", store, settings, inside=[allowed.resolve()], on_event=events.append
        )
        nothing = ingest(
            [tmp_path / "blank"], "blank", store, settings, on_event=nothing_events.append
        )
        left = store.names()

    assert events[0] == Started(files=4)
    (refused,) = [e.result for e in events if isinstance(e, FileDone) and e.result.error]
    assert (refused.source, refused.status, refused.error) == (
        str(private / "secret.md"),
        "failed",
        OUTSIDE,
    )
    assert finished.report.count("added") == 3 and finished.nothing == ""
    assert nothing_events[0] == Started(files=1) and nothing_events[-1] is nothing
    assert nothing.nothing == f"nothing was ingested: {tmp_path / 'blank' / 'blank.md'}: empty file"
    assert left == ["notes"]  # the collection made for nothing is not left behind


def test_the_web_app_mcp_and_the_cli_store_the_same_chunks_of_one_folder_through_the_one_path(
    tmp_path, monkeypatch, scripted_llm
):
    """The web app's upload folder is the folder: its files keep one path (so one chunk id)
    in all three stores. Each front end must call deepsift.api.ingest, which runs the
    pipeline: a front end that ran the pipeline itself would not be seen here."""
    through_api = []
    pipeline = ingest_path.ingest_files

    def seen(paths, collection, store, embedder, settings, **options):
        through_api.append(settings.data_dir)
        return pipeline(paths, collection, store, embedder, settings, **options)

    monkeypatch.setattr(ingest_path, "ingest_files", seen)
    web, mcp, cli = tmp_path / "web", tmp_path / "mcp", tmp_path / "cli"
    llm = {"llm_base_url": scripted_llm.url, "llm_api_key": "test"}

    with TestClient(create_app(Settings(data_dir=web, **llm)), base_url="http://127.0.0.1") as c:
        files = [("files", (name, text.encode(), "text/markdown")) for name, text in NOTES.items()]
        uploaded = c.post("/api/collections/notes/files", files=files)
    assert uploaded.status_code == 200 and "event: done" in uploaded.text, uploaded.text
    folder = (web / "uploads" / "notes").resolve()

    async def call_mcp() -> dict:
        server = build_server(Settings(data_dir=mcp, mcp_ingest_folders=[folder], **llm))
        asked = {"paths": [str(folder)], "collection": "notes"}
        async with Client(server) as client:
            called = await client.call_tool("ingest", asked)
        assert not called.is_error, called.content
        return called.structured_content

    assert anyio.run(call_mcp)["added"] == len(NOTES)

    monkeypatch.setenv("DEEPSIFT_DATA_DIR", str(cli))
    with pytest.raises(SystemExit) as exited:
        deepsift.cli.main(["ingest", str(folder), "--collection", "notes"])
    assert exited.value.code == 0

    assert through_api == [web, mcp, cli]
    chunks = _stored(web, "notes")
    assert {Path(source).relative_to(folder).as_posix() for _, _, source in chunks} == set(NOTES)
    assert _stored(mcp, "notes") == chunks
    assert _stored(cli, "notes") == chunks
