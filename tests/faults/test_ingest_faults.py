"""Ingest under faults: hostile paths and files, unreadable folders, symlink loops, large files,
and crashes at any write, each ending in one line per bad input or in exactly what a clean
ingest gives."""

import logging
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from deepsift.cli import main
from deepsift.config import Settings
from deepsift.ingest import pipeline
from deepsift.ingest.chunking import chunk_document
from deepsift.ingest.loaders import load
from deepsift.ingest.pipeline import chunk_id, document_hash, find_files, ingest
from deepsift.llm.embedders import get_embedder
from deepsift.records import Chunk
from deepsift.retrieval.references import filed_under
from deepsift.store import Store

from fake_openai import FakeOpenAI


@pytest.fixture
def store(settings: Settings):
    store = Store(settings)
    yield store
    store.close()


def _rows(store: Store, name: str) -> set[tuple[str, str, int, str]]:
    """Every stored chunk as (source, id, position, doc_hash)."""
    fields = ["source", "id", "position", "doc_hash"]
    store.count(name)  # loads the collection
    rows = store._client.query(name, filter="", output_fields=fields, limit=16_384)
    return {tuple(row[f] for f in fields) for row in rows}


def _expected_rows(files: list[Path], settings: Settings) -> set[tuple[str, str, int, str]]:
    """What a clean ingest of these files stores, worked out without embedding or storing."""
    expected = set()
    for path in files:
        source, data = str(path.resolve()), path.read_bytes()
        chunks = chunk_document(load(path), settings.chunk_chars, settings.chunk_overlap)
        for c in chunks:
            doc_hash = document_hash(data)
            expected.add((source, chunk_id(source, c.position, c.text), c.position, doc_hash))
    return expected


NAMES = [
    "café/note.md",
    "日本/メモ.md",
    "🙂/smile.md",
    'quote"d.md',
    "it's.md",
    "back\\slash.md",
    "new\nline.md",
    "tab\there.md",
    "bell\x07.md",
]


def test_paths_with_any_characters_are_ingested_then_unchanged_then_pruned(settings, store):
    folder = Path("docs")
    for i, name in enumerate(NAMES):
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# Note {i}\n\nKestrel Works note number {i} on phosphorus.\n")
    embedder = get_embedder(settings)

    first = ingest([folder], "names", store, embedder, settings)
    second = ingest([folder], "names", store, embedder, settings)
    for path in folder.rglob("*.md"):
        path.unlink()
    pruned = ingest([folder], "names", store, embedder, settings, prune=True)

    assert [(f.status, f.error) for f in first.files] == [("added", "")] * len(NAMES)
    assert {Path(f.source).name for f in first.files} == {Path(n).name for n in NAMES}
    assert [f.status for f in second.files] == ["unchanged"] * len(NAMES)
    assert [f.status for f in pruned.files] == ["pruned"] * len(NAMES)
    assert store.documents("names") == {} and store.count("names") == 0


class MemoEmbedder:
    """The real embedder, embedding each text once: the crash test writes the same texts often."""

    def __init__(self, embedder) -> None:
        self.embedder, self.name, self.dim = embedder, embedder.name, embedder.dim
        self.vectors: dict[str, list[float]] = {}

    def embed(self, texts: list[str]) -> list[list[float]]:
        new = [text for text in texts if text not in self.vectors]
        self.vectors.update(zip(new, self.embedder.embed(new), strict=True))
        return [self.vectors[text] for text in texts]


class Killed(Exception):
    """Stands for the process dying at this point."""


def _versions(folder: Path) -> tuple[dict[str, str], dict[str, str]]:
    """Two versions of a small corpus, filed by number: `0001-shrinks.txt` loses its last chunk
    but keeps its first (the same first chunk id, so only the hashes tell the versions apart),
    `0003-new.txt` appears."""
    paragraphs = [f"Paragraph {i} of the shrinking file. " * 5 for i in range(6)]
    old = {"0001-shrinks.txt": "\n\n".join(paragraphs), "0002-kept.txt": "Kept " * 50}
    shrunk = "\n\n".join(paragraphs[:5])
    return old, {**old, "0001-shrinks.txt": shrunk, "0003-new.txt": "New text. " * 60}


def _write_files(folder: Path, files: dict[str, str]) -> list[str]:
    folder.mkdir(exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text)
    return list(files)


def test_a_crash_at_any_write_of_an_ingest_converges_on_rerun_to_a_clean_ingest(
    settings, store, monkeypatch
):
    """Including the window between writing a file's new chunks and deleting its old ones; the
    documents filed by number (what references are followed by) converge with the chunks."""
    settings = settings.model_copy(update={"chunk_chars": 200, "chunk_overlap": 0})
    monkeypatch.setattr(pipeline, "WRITE_BATCH", 2)  # files of several batches
    embedder = MemoEmbedder(get_embedder(settings))
    folder = Path("docs")
    old, new = _versions(folder)
    clean = _expected_rows([folder / name for name in _write_files(folder, new)], settings)
    filed = [[name] for name in new]
    writes = 0
    crash_at: int | None = None

    def counted(write):
        def wrapper(*args, **kwargs):
            nonlocal writes
            writes += 1
            if writes == crash_at:
                raise Killed
            return write(*args, **kwargs)

        return wrapper

    monkeypatch.setattr(store._client, "upsert", counted(store._client.upsert))
    monkeypatch.setattr(store._client, "delete", counted(store._client.delete))
    crashes = 0
    while True:
        (folder / "0003-new.txt").unlink()
        _write_files(folder, old)
        ingest([folder], "docs", store, embedder, settings, prune=True)
        _write_files(folder, new)
        writes, crash_at = 0, crashes + 1
        try:
            ingest([folder], "docs", store, embedder, settings)
        except Killed:
            crashes += 1
            crash_at = None
            ingest([folder], "docs", store, embedder, settings)
            assert _rows(store, "docs") == clean, f"after a crash at write {crashes}"
            assert _filed(store) == filed, f"after a crash at write {crashes}"
            continue
        break
    assert crashes == writes >= 8  # every write was a crash point, the old chunks' delete too
    assert _rows(store, "docs") == clean and _filed(store) == filed
    assert len({row[0] for row in clean}) == 3 and len(clean) >= 10


def _filed(store: Store) -> list[list[str]]:
    """The documents the store files under 1, 2 and 3, as references are followed to them."""
    return [
        [Path(s).name for s in store.sources_containing("docs", n) if filed_under(s) == n]
        for n in "123"
    ]


def _notes(folder: Path, paragraphs: int) -> list[Path]:
    """200 small notes of `paragraphs` chunks each (at chunk_chars 200); every tenth is empty,
    so that ingest prints a line for it: a progress tick."""
    folder.mkdir(exist_ok=True)
    for i in range(200):
        parts = [
            f"Note {i}, part {n}: the Orrin read {i * n % 101} on day {i}. " * 3
            for n in range(paragraphs)
        ]
        (folder / f"{i:03}.txt").write_text("\n\n".join(parts) if i % 10 else "")
    return sorted(p for p in folder.iterdir() if p.stat().st_size)


@pytest.mark.parametrize("milvus", ["lite file", "server", "lite file, on ray"])
def test_ingest_killed_at_random_points_converges_on_rerun_to_a_clean_ingest(
    milvus, tmp_path, request
):
    """Killed while adding notes, then while replacing them with shorter versions, into a Milvus
    Lite file or a Milvus server, in this process or embedded on a Ray runtime (`--ray`: the
    driver is killed). Embedded by a loopback endpoint: the kills are about the store, and the
    process starts sooner."""
    if "ray" in milvus:
        pytest.importorskip("ray", reason="the ray extra is not installed")
        request.addfinalizer(lambda: _end_processes_in(tmp_path))  # what a killed driver left
    folder, data = tmp_path / "docs", tmp_path / "data"
    seed = random.randrange(1_000_000)
    uri = request.getfixturevalue("milvus_server") if milvus == "server" else ""
    name = f"docs_{seed}"  # a server outlives the test: a collection of its own
    command = [sys.executable, "-m", "deepsift", "ingest", str(folder), "--collection", name]
    command += ["--ray"] if "ray" in milvus else []
    adding = random.Random(seed).randrange(10, 19)
    replacing = random.Random(seed).randrange(2, adding)  # among the notes added before

    with FakeOpenAI(lambda body: "") as embeddings:
        env = _fake_embedding_env(tmp_path, embeddings.url, uri)
        for paragraphs, tick in ((3, adding), (2, replacing)):
            notes = _notes(folder, paragraphs)
            child = subprocess.Popen(
                command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
            )
            seen, said = 0, []
            for line in child.stderr:  # killed at a tick, while the writer writes the note before
                said.append(line)
                seen += line.startswith("skipped")
                if seen == tick:
                    child.send_signal(signal.SIGKILL)
                    break
            ended = child.wait(60)
            assert ended == -signal.SIGKILL, f"seed {seed}: ended before tick {tick}: {said[-5:]}"
            child.stderr.close()
        finished = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)

    assert finished.returncode == 0, finished.stderr
    settings = Settings(data_dir=data, milvus_uri=uri, chunk_chars=200, chunk_overlap=0)
    with Store(settings) as store:
        assert _rows(store, name) == _expected_rows(notes, settings), f"seed {seed}"


def test_a_ray_worker_killed_mid_ingest_converges_on_rerun_to_a_clean_ingest(tmp_path, request):
    """SIGKILL of the embedding actor's process while it works: Ray restarts the actor (or the
    ingest fails); either way, a rerun leaves exactly a clean ingest's chunks."""
    pytest.importorskip("ray", reason="the ray extra is not installed")
    request.addfinalizer(lambda: _end_processes_in(tmp_path))
    folder, data = tmp_path / "docs", tmp_path / "data"
    notes = _notes(folder, 3)
    command = [sys.executable, "-m", "deepsift", "ingest", str(folder), "--collection", "docs"]
    command += ["--ray", "--ray-workers", "1"]
    with FakeOpenAI(lambda body: "") as embeddings:
        env = _fake_embedding_env(tmp_path, embeddings.url)
        child = subprocess.Popen(
            command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )
        said = []
        for line in child.stderr:  # a file done: the actor is up and working
            said.append(line)
            if line.startswith("skipped"):
                break
        worker = _descendant(child.pid, "ray::MapWorker", within=30)
        assert worker, f"no embedding actor under the driver: {said[-5:]}"
        os.kill(worker, signal.SIGKILL)
        child.communicate(timeout=300)
        finished = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)

    assert finished.returncode == 0, finished.stderr
    settings = Settings(data_dir=data, chunk_chars=200, chunk_overlap=0)
    with Store(settings) as store:
        assert _rows(store, "docs") == _expected_rows(notes, settings)


def _fake_embedding_env(home: Path, embeddings: str, uri: str = "") -> dict[str, str]:
    """An ingest's environment: its data under `home`, vectors from the loopback `embeddings`."""
    return {
        "PATH": "/usr/bin:/bin",
        "HOME": str(home),
        "DEEPSIFT_DATA_DIR": str(home / "data"),
        "DEEPSIFT_EMBEDDING_BASE_URL": embeddings,
        "DEEPSIFT_EMBEDDING_MODEL": "fake-embed",
        "DEEPSIFT_CHUNK_CHARS": "200",
        "DEEPSIFT_CHUNK_OVERLAP": "0",
        **({"DEEPSIFT_MILVUS_URI": uri} if uri else {}),
    }


def _descendant(pid: int, title: str, within: float) -> int | None:
    """A process under `pid` whose command line starts with `title` (Ray names its workers so),
    waited for up to `within` seconds."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        parents, titles = {}, {}
        for proc in Path("/proc").iterdir():
            try:
                if proc.name.isdigit():
                    stat = (proc / "stat").read_text()
                    parents[int(proc.name)] = int(stat.rsplit(")", 1)[1].split()[1])
                    titles[int(proc.name)] = (
                        (proc / "cmdline").read_bytes().decode(errors="replace")
                    )
            except OSError:
                continue  # ended meanwhile
        for candidate, line in titles.items():
            ancestor = parents.get(candidate)
            while ancestor and ancestor != pid:
                ancestor = parents.get(ancestor)
            if ancestor == pid and line.startswith(title):
                return candidate
        time.sleep(0.2)
    return None


def _end_processes_in(folder: Path) -> None:
    """Kill the processes working in `folder` (pytest's own aside): those a test started, and
    what Ray's runtime left after its driver was killed."""
    for proc in Path("/proc").iterdir():
        try:
            ours = proc.name.isdigit() and int(proc.name) != os.getpid()
            if ours and (proc / "cwd").resolve() == folder.resolve():
                os.kill(int(proc.name), signal.SIGKILL)
        except OSError:
            continue  # gone, or not ours to read


def _refuse_scandir(monkeypatch, folder: Path) -> None:
    """Tests may run as root, whom chmod does not stop: refuse the folder as the kernel would."""
    if os.geteuid() != 0:
        return
    real = os.scandir

    def scandir(path="."):
        if isinstance(path, str | os.PathLike) and Path(path).resolve() == folder.resolve():
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)


def test_an_unreadable_folder_is_named_and_fails_the_run_when_it_was_the_only_input(
    tmp_path, capsys, monkeypatch
):
    monkeypatch.setenv("DEEPSIFT_DATA_DIR", str(tmp_path / "data"))
    docs = tmp_path / "docs"
    locked = docs / "locked"
    locked.mkdir(parents=True)
    (locked / "secret.md").write_text("# Secret\n\nNot readable.\n")
    (docs / "open.md").write_text("# Open\n\nKestrel Works removes phosphorus.\n")
    locked.chmod(0)
    _refuse_scandir(monkeypatch, locked)
    try:
        with pytest.raises(SystemExit) as beside_a_good_file:
            main(["ingest", str(docs), "--collection", "docs"])
        beside = capsys.readouterr().err
        with pytest.raises(SystemExit) as alone:
            main(["ingest", str(locked), "--collection", "docs"])
        only = capsys.readouterr().err
    finally:
        locked.chmod(0o755)

    assert beside_a_good_file.value.code == 0
    assert alone.value.code == 1
    for stderr in (beside, only):
        (line,) = [line for line in stderr.splitlines() if line.startswith("skipped")]
        assert line == "skipped docs/locked: cannot read folder: Permission denied"
        assert "Traceback" not in stderr


def test_symlink_loops_end_and_ingest_each_file_once(tmp_path):
    docs = tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    (docs / "sub" / "note.md").write_text("# Note\n\ntext\n")
    (docs / "sub" / "loop").symlink_to(docs / "sub")
    (docs / "up").symlink_to(docs)
    (docs / "alias.md").symlink_to(docs / "sub" / "note.md")

    files, failed = find_files([docs, docs / "up", docs / "sub" / "loop"])

    assert files == [(docs / "sub" / "note.md").resolve()] and failed == []


def test_a_file_over_max_file_bytes_is_skipped_with_one_line_before_it_is_read(
    settings, store, monkeypatch
):
    settings = settings.model_copy(update={"max_file_bytes": 1_000_000})
    big, small = Path("big.txt"), Path("small.txt")
    big.write_text("A line of a generated log file.\n" * 100_000)  # 3.2 MB
    small.write_text("Kestrel Works removes phosphorus.\n")
    read = Path.read_bytes
    monkeypatch.setattr(Path, "read_bytes", lambda p: None if p.name == big.name else read(p))

    report = ingest([big, small], "docs", store, get_embedder(settings), settings)

    assert [(Path(f.source).name, f.status) for f in report.files] == [
        ("big.txt", "failed"),
        ("small.txt", "added"),
    ]
    assert report.files[0].error == (
        "3,200,000 bytes, over max_file_bytes (1,000,000): "
        "raise DEEPSIFT_MAX_FILE_BYTES to ingest it"
    )


class CountingEmbedder:
    """The real embedder, recording how many texts each call embeds."""

    def __init__(self, embedder) -> None:
        self.embedder, self.name, self.dim = embedder, embedder.name, embedder.dim
        self.calls: list[int] = []

    def embed(self, texts: list[str]) -> list[list[float]]:
        self.calls.append(len(texts))
        return self.embedder.embed(texts)


def test_a_large_file_is_embedded_and_written_in_bounded_batches_with_progress(
    settings, store, monkeypatch
):
    settings = settings.model_copy(update={"chunk_chars": 200, "chunk_overlap": 0})
    monkeypatch.setattr(pipeline, "WRITE_BATCH", 32)
    big = Path("big.txt")
    big.write_text("\n\n".join(f"Paragraph {i}: " + "gauge readings. " * 10 for i in range(110)))
    embedder = CountingEmbedder(get_embedder(settings))
    written: list[int] = []
    upsert = store._client.upsert
    monkeypatch.setattr(
        store._client, "upsert", lambda name, rows: written.append(len(rows)) or upsert(name, rows)
    )
    progress: list[tuple[int, int]] = []

    report = ingest(
        [big],
        "docs",
        store,
        embedder,
        settings,
        on_chunks=lambda source, done, total: progress.append((done, total)),
    )

    total = report.new_chunks
    assert total > 100
    assert max(embedder.calls) == max(written) == 32
    assert sum(embedder.calls) == total
    assert progress == [(min(done, total), total) for done in range(32, total + 32, 32)]
    assert _rows(store, "docs") == _expected_rows([big], settings)


def test_hostile_files_are_skipped_with_one_line_each_and_nothing_logged(settings, store, caplog):
    import zipfile

    folder = Path("hostile")
    folder.mkdir()
    (folder / "latin1.txt").write_bytes(b"caf\xe9 au lait\n\nsecond paragraph\n")
    (folder / "latin1.md").write_bytes(b"# Caf\xe9\n\ncaf\xe9 au lait\n")
    (folder / "page.pdf").write_text("<html><body><h1>Not a PDF</h1><p>hello</p></body></html>")
    (folder / "zero.pdf").write_bytes(b"")
    (folder / "empty.txt").write_text("\n\n")
    with zipfile.ZipFile(folder / "garbage.docx", "w") as docx:
        docx.writestr("[Content_Types].xml", "nonsense")
        docx.writestr("word/document.xml", b"\x00\xff garbage <w:p\n" * 200)
    (folder / "good.md").write_text("# Good\n\nKestrel Works removes phosphorus.\n")

    with caplog.at_level(logging.WARNING):
        report = ingest([folder], "hostile", store, get_embedder(settings), settings)

    errors = {Path(f.source).name: f.error for f in report.files if f.status == "failed"}
    assert {name: error.split(" (")[0] for name, error in errors.items()} == {
        "latin1.txt": "not UTF-8 text",
        "latin1.md": "not UTF-8 text",
        "page.pdf": "cannot read PDF",
        "zero.pdf": "empty file",
        "empty.txt": "empty file",
        "garbage.docx": "cannot parse",
    }
    assert all("\n" not in error for error in errors.values()), errors
    assert [f.status for f in report.files if Path(f.source).name == "good.md"] == ["added"]
    assert caplog.records == []


def _alias_bomb() -> str:
    """556 bytes of YAML that name 9**9 values: each anchor repeats the one before nine times."""
    lines = ["a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for before, name in zip("abcdefgh", "bcdefghi", strict=True):
        lines.append(f"{name}: &{name} [{', '.join(['*' + before] * 9)}]")
    return "\n".join([*lines, "title: *i"])


HOSTILE_FRONT_MATTER = {
    "bomb.md": f"---\n{_alias_bomb()}\n---\n\n# Bomb\n\nA body.\n",
    "deep-toml.md": "+++\ntitle = " + "[" * 5_000 + "]" * 5_000 + "\n+++\n\n# Deep\n\nA body.\n",
    "deep-yaml.md": "---\ntitle: " + "[" * 5_000 + "]" * 5_000 + "\n---\n\n# Deep\n\nA body.\n",
}


def test_hostile_front_matter_skips_its_file_in_one_line_in_bounded_memory(settings, store):
    import tracemalloc

    folder = Path("docs")
    folder.mkdir()
    for name, text in HOSTILE_FRONT_MATTER.items():
        (folder / name).write_text(text)
    for name in ("good-1.md", "good-2.md"):
        (folder / name).write_text("---\ntitle: Good\n---\n\nKestrel Works removes phosphorus.\n")
    embedder = get_embedder(settings)
    embedder.embed(["warm up"])  # the model's own memory is not the parse's

    tracemalloc.start()
    baseline = tracemalloc.get_traced_memory()[0]
    try:
        report = ingest([folder], "docs", store, embedder, settings)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()

    results = {Path(f.source).name: (f.status, f.error) for f in report.files}
    assert results["good-1.md"] == results["good-2.md"] == ("added", "")
    for name in HOSTILE_FRONT_MATTER:
        status, error = results[name]
        assert status == "failed" and error and "\n" not in error and len(error) < 200, error
    assert "aliases" in results["bomb.md"][1]
    assert "nests deeper" in results["deep-toml.md"][1]
    assert "nests deeper" in results["deep-yaml.md"][1]
    assert peak - baseline < 300 * 2**20


def test_any_exception_parsing_one_file_fails_that_file_alone(settings, store, monkeypatch):
    folder = Path("docs")
    folder.mkdir()
    for name in ("a.md", "b.md", "c.md"):
        (folder / name).write_text(f"# {name}\n\nKestrel Works removes phosphorus.\n")
    real = pipeline.load

    def load(path: Path):
        if path.name == "b.md":
            raise RecursionError("maximum recursion depth exceeded\nand a second line")
        return real(path)

    monkeypatch.setattr(pipeline, "load", load)

    report = ingest([folder], "docs", store, get_embedder(settings), settings)

    assert {Path(f.source).name: (f.status, f.error) for f in report.files} == {
        "a.md": ("added", ""),
        "b.md": ("failed", "cannot parse (RecursionError: maximum recursion depth exceeded)"),
        "c.md": ("added", ""),
    }


@pytest.mark.parametrize(
    ("name", "front"),
    [
        ("eip-1.md", "---\neip: 1\nstatus: Final\ndate: 2021-01-01\n---\n"),
        ("eip-2.txt", '+++\neip = 2\nstatus = "Final"\ndate = "2021-01-01"\n+++\n'),
    ],
)
def test_front_matter_is_the_document_s_facts_and_its_first_chunk_s_header_never_a_passage(
    name, front, settings
):
    """Its fields are searched with the first chunk, under its context line, where no passage
    or sentence of the body is taken from; a section heading does not title the document."""
    path = Path(name)
    body = "## Gas\n\nThe proposal prices gas for storage.\n\n## Costs\n\nA slot costs 5 gas.\n"
    path.write_text(f"{front}\n{body}")

    document = load(path)
    chunks = chunk_document(document, settings.chunk_chars, settings.chunk_overlap)

    assert document.facts["status"] == "Final" and document.facts["date"] == "2021-01-01"
    assert document.title == path.stem  # not "Gas"
    header, _, first_body = chunks[0].text.partition("\n\n")
    assert "status: Final" in header.splitlines() and "date: 2021-01-01" in header.splitlines()
    stored = Chunk(id="1", text=chunks[0].text, source=name, title=document.title, collection="c")
    assert stored.body == first_body and "gas for storage" in first_body
    for passage in [first_body, *(c.text for c in chunks[1:])]:
        assert "status" not in passage and "2021-01-01" not in passage, passage


@pytest.mark.parametrize(
    ("opening", "title"),
    [("# Abstract", "gas"), ("## Gas Pricing", "gas"), ("# Gas pricing", "Gas pricing")],
)
def test_a_body_that_opens_with_a_section_does_not_title_its_document(opening, title, tmp_path):
    path = tmp_path / "gas.md"
    path.write_text(f"---\ntitle: Gas Pricing\n---\n\n{opening}\n\nStorage costs gas.\n")

    assert load(path).title == title


def test_fenced_text_that_is_not_fields_stays_the_document_s_text(tmp_path):
    path = tmp_path / "plan.md"
    path.write_text("---\nThe launch moved to May.\n---\n\n# Plan\n\nWe ship in June.\n")

    document = load(path)

    assert "The launch moved to May." in [block.text for block in document.blocks]
    assert document.header == []


def test_a_document_is_found_by_an_author_only_its_front_matter_names(settings, store, tmp_path):
    folder = tmp_path / "proposals"
    folder.mkdir()
    authors = ["Wren Halloway", "Ismo Tarkka", "Pell Anders"]
    for n, author in enumerate(authors, start=1):
        (folder / f"p-{n}.md").write_text(
            f"---\ntitle: Storage rent {n}\nauthor: {author}\nstatus: Draft\n---\n\n"
            f"## Abstract\n\nA proposal to charge rent for contract storage, variant {n}.\n"
        )
    embedder = get_embedder(settings)
    ingest([folder], "proposals", store, embedder, settings, description="proposals")

    for n, author in enumerate(authors, start=1):  # the bodies differ only in their numbers
        question = f"Which proposal did {author} write?"
        hits = store.search("proposals", question, embedder.embed_queries([question])[0], 3)
        assert Path(hits[0].source).name == f"p-{n}.md", (author, hits[0].source)
        assert author not in hits[0].body
