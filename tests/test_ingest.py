import shutil
from pathlib import Path

import pytest

from deepsift.ingest import pipeline
from deepsift.ingest.pipeline import ingest
from deepsift.llm.embedders import get_embedder
from deepsift.store import Store, StoredChunk, StoreError

from conftest import CORPUS, run_cli


@pytest.fixture
def store(settings):
    store = Store(settings)
    yield store
    store.close()


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    shutil.copytree(CORPUS / "science", folder)
    return folder


def _ids_by_source(store: Store, name: str) -> dict[str, set[str]]:
    rows = store._client.query(name, filter="", output_fields=["id", "source"], limit=10_000)
    found: dict[str, set[str]] = {}
    for row in rows:
        found.setdefault(row["source"], set()).add(row["id"])
    return found


def test_every_supported_format_of_the_sample_corpus_is_ingested(settings, store, corpus):
    report = ingest([corpus], "docs", store, get_embedder(settings), settings)

    assert report.count("failed") == 0
    assert {Path(f.source).suffix for f in report.files} == {".md", ".txt", ".html", ".pdf"}
    assert store.count("docs") == report.new_chunks > 0


def test_second_ingest_of_unchanged_files_adds_nothing(settings, store, corpus):
    embedder = get_embedder(settings)
    ingest([corpus], "docs", store, embedder, settings)
    before = _ids_by_source(store, "docs")

    again = ingest([corpus], "docs", store, embedder, settings)

    assert again.new_chunks == 0
    assert again.count("unchanged") == len(again.files)
    assert _ids_by_source(store, "docs") == before


def test_files_parsed_by_an_older_deepsift_are_parsed_again_once(
    settings, store, corpus, monkeypatch
):
    embedder = get_embedder(settings)
    first = ingest([corpus], "docs", store, embedder, settings)
    monkeypatch.setattr(pipeline, "PARSING", pipeline.PARSING + 1)  # loading or chunking changed

    again = ingest([corpus], "docs", store, embedder, settings)
    third = ingest([corpus], "docs", store, embedder, settings)

    assert again.count("updated") == len(first.files) and again.new_chunks == first.new_chunks
    assert third.count("unchanged") == len(first.files) and third.new_chunks == 0
    assert store.count("docs") == first.new_chunks


def test_editing_one_file_replaces_only_that_files_chunks(settings, store, corpus):
    embedder = get_embedder(settings)
    ingest([corpus], "docs", store, embedder, settings)
    before = _ids_by_source(store, "docs")
    edited = corpus / "buffer_strip_trial_results.txt"
    edited.write_text("Revised trial note.\n\nThe 12 m strips were extended to 15 m in 2026.\n")

    report = ingest([corpus], "docs", store, embedder, settings)

    after = _ids_by_source(store, "docs")
    assert [(Path(f.source).name, f.status) for f in report.files if f.status != "unchanged"] == [
        (edited.name, "updated")
    ]
    assert after[str(edited)].isdisjoint(before[str(edited)])
    assert len(after[str(edited)]) == 1
    assert {s: ids for s, ids in after.items() if s != str(edited)} == {
        s: ids for s, ids in before.items() if s != str(edited)
    }


def test_prune_removes_the_chunks_of_deleted_files(settings, store, corpus):
    embedder = get_embedder(settings)
    ingest([corpus], "docs", store, embedder, settings)
    gone = corpus / "sediment_phosphorus_study.md"
    gone.unlink()

    kept = ingest([corpus], "docs", store, embedder, settings)
    assert str(gone) in store.documents("docs")
    pruned = ingest([corpus], "docs", store, embedder, settings, prune=True)

    assert kept.count("pruned") == 0
    assert [Path(f.source).name for f in pruned.files if f.status == "pruned"] == [gone.name]
    assert str(gone) not in store.documents("docs")


def test_a_collection_refuses_a_different_embedding_model(settings, store, corpus):
    class OtherEmbedder:
        name, dim = "other-model", 8

        def embed(self, texts):
            return [[1.0] * 8 for _ in texts]

    ingest([corpus / "monitoring_report_2025.md"], "docs", store, get_embedder(settings), settings)

    with pytest.raises(StoreError, match="other-model"):
        ingest([corpus], "docs", store, OtherEmbedder(), settings)


def test_bad_files_are_skipped_with_one_line_each_and_the_good_one_ingested(tmp_path):
    folder = tmp_path / "mixed"
    folder.mkdir()
    (folder / "broken.pdf").write_bytes(b"%PDF-1.4\n1 0 obj << /Type /Catalog >> garbage")
    (folder / "empty.md").write_text("")
    (folder / "binary.txt").write_bytes(bytes(range(256)) * 4)
    (folder / "good.md").write_text("# Good\n\nKestrel Works removes phosphorus from the Orrin.\n")

    result = run_cli("ingest", str(folder), "--collection", "mixed", data=tmp_path / "data")

    assert result.returncode == 0, result.stderr
    skipped = [line for line in result.stderr.splitlines() if line.startswith("skipped")]
    assert sorted(line.split()[1].rstrip(":").split("/")[-1] for line in skipped) == [
        "binary.txt",
        "broken.pdf",
        "empty.md",
    ]
    assert "Traceback" not in result.stderr
    listing = run_cli("collections", "--json", data=tmp_path / "data")
    assert '"documents": 1' in listing.stdout


def test_a_broken_link_is_a_failed_file_and_a_new_collection_of_failures_is_dropped(
    settings, store, tmp_path
):
    folder = tmp_path / "links"
    folder.mkdir()
    (folder / "gone.md").symlink_to(tmp_path / "nowhere.md")
    (folder / "empty.md").write_text("")
    embedder = get_embedder(settings)

    failed = ingest([folder], "links", store, embedder, settings)
    store.ensure("kept", "made before", embedder)
    kept = ingest([folder], "kept", store, embedder, settings)

    assert sorted((Path(f.source).name, f.status) for f in failed.files) == [
        ("empty.md", "failed"),
        ("gone.md", "failed"),
    ]
    gone = next(f for f in failed.files if f.source.endswith("gone.md"))
    assert gone.error == f"a link to {tmp_path / 'nowhere.md'}, which is not there"
    assert not store.exists("links")  # made by that ingest, nothing put in it: dropped
    assert store.exists("kept") and not kept.succeeded  # there before: kept


def test_ingest_exits_1_when_every_input_fails(tmp_path):
    """Every file read and none ingested is exit 1 (a path that is not there is exit 2 before
    anything opens: test_cli.py::test_a_missing_folder_is_exit_2_and_creates_nothing_to_describe).
    """
    (tmp_path / "empty.txt").write_text("")
    (tmp_path / "blank.md").write_text("   \n")

    result = run_cli(
        "ingest",
        str(tmp_path / "empty.txt"),
        str(tmp_path / "blank.md"),
        "--collection",
        "c",
        data=tmp_path / "data",
    )

    assert result.returncode == 1
    assert "empty.txt: empty file" in result.stderr
    assert "blank.md:" in result.stderr
    listing = run_cli("collections", "--json", data=tmp_path / "data")
    assert listing.stdout.strip() == "[]"  # no empty collection left behind


def test_an_openai_compatible_embedder_builds_its_own_collection(settings, store, corpus):
    from fake_openai import FakeOpenAI

    with FakeOpenAI(lambda body: "") as server:
        remote = settings.model_copy(
            update={"embedding_base_url": server.url, "embedding_model": "fake-embed"}
        )
        embedder = get_embedder(remote)
        report = ingest([corpus / "monitoring_report_2025.md"], "remote", store, embedder, remote)
        hits = store.search("remote", "phosphorus", embedder.embed(["phosphorus"])[0], 3)

    assert (embedder.name, embedder.dim) == ("fake-embed", 8)
    assert report.new_chunks > 0 and hits
    assert store.info("remote").embedding_model == "fake-embed"
    with pytest.raises(StoreError, match="fake-embed"):
        store.check_embedder("remote", get_embedder(settings))


def test_two_embedding_models_on_one_endpoint_are_two_embedders(settings):
    from fake_openai import FakeOpenAI

    with FakeOpenAI(lambda body: "") as server:
        first, second = (
            settings.model_copy(update={"embedding_base_url": server.url, "embedding_model": m})
            for m in ("embed-small", "embed-large")
        )

        small, large = get_embedder(first), get_embedder(second)

    assert (small.name, large.name) == ("embed-small", "embed-large")
    assert get_embedder(first) is small


def test_text_and_title_longer_than_their_fields_are_cut_not_refused(settings, store):
    embedder = get_embedder(settings)
    store.ensure("docs", "", embedder)
    chunk = StoredChunk(
        id="long",
        text="phosphorus " * 7000,
        vector=embedder.embed(["phosphorus"])[0],
        source="/x.pdf",
        title="é" * 1000,
        position=0,
        doc_hash="h",
    )

    store.add_chunks("docs", [chunk])
    store.flush("docs")

    (hit,) = store.search("docs", "phosphorus", chunk.vector, 1)
    assert len(hit.title.encode()) <= 1024 and hit.title == "é" * 512
    assert len(hit.text.encode()) <= 65_535
