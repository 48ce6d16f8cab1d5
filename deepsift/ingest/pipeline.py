"""Ingest files into a collection: skip unchanged files, replace changed ones, prune deleted."""

import hashlib
from collections import deque
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Literal

from deepsift.config import Settings
from deepsift.ingest.chunking import TextChunk, chunk_document
from deepsift.ingest.loaders import SUPPORTED, LoadError, load
from deepsift.models import Embedder
from deepsift.store import Store, StoredChunk

Status = Literal["added", "updated", "unchanged", "failed", "pruned"]


@dataclass
class FileResult:
    source: str
    status: Status
    chunks: int = 0
    error: str = ""


@dataclass
class IngestReport:
    files: list[FileResult]

    def count(self, status: Status) -> int:
        return sum(1 for f in self.files if f.status == status)

    @property
    def new_chunks(self) -> int:
        return sum(f.chunks for f in self.files if f.status in ("added", "updated"))

    @property
    def succeeded(self) -> bool:
        """Anything was ingested or already up to date (or nothing was asked)."""
        return not self.files or any(f.status != "failed" for f in self.files)


def find_files(paths: Iterable[Path]) -> tuple[list[Path], list[FileResult]]:
    """Expand folders recursively; a missing path is a failure of its own, not of the run."""
    files: list[Path] = []
    missing: list[FileResult] = []
    for path in paths:
        if path.is_dir():
            found = sorted(
                p
                for p in path.rglob("*")
                if p.is_file() and p.suffix.lower() in SUPPORTED and not p.name.startswith(".")
            )
            files.extend(p.resolve() for p in found)
        elif path.exists():
            files.append(path.resolve())
        else:
            missing.append(FileResult(str(path), "failed", error="no such file or folder"))
    return list(dict.fromkeys(files)), missing


def chunk_id(source: str, position: int, text: str) -> str:
    return hashlib.sha256(f"{source}\x00{position}\x00{text}".encode()).hexdigest()[:32]


@dataclass
class ParsedFile:
    """A changed file, loaded and chunked, waiting for its vectors."""

    path: Path
    doc_hash: str
    title: str
    chunks: list[TextChunk]


LOOKAHEAD = 2  # files parsed ahead of the embedder: overlap without unbounded memory


def ingest(
    paths: Iterable[Path],
    collection: str,
    store: Store,
    embedder: Embedder,
    settings: Settings,
    description: str | None = None,
    prune: bool = False,
    on_file: Callable[[FileResult], None] = lambda result: None,
    on_start: Callable[[int], None] = lambda total: None,
) -> IngestReport:
    """Parse, embed and write files as a pipeline: while one file is embedded, the next ones
    are parsed and the last one is written, so the embedder (the slowest stage) never waits."""
    files, results = find_files(paths)
    store.ensure(collection, description, embedder)
    stored = store.documents(collection)
    on_start(len(files))
    for result in results:
        on_file(result)

    def done(result: FileResult) -> None:
        results.append(result)
        on_file(result)

    with ThreadPoolExecutor(1) as reader, ThreadPoolExecutor(1) as writer:
        upcoming = iter(files)
        parsing = deque(
            reader.submit(_parse, path, stored, settings) for path in islice(upcoming, LOOKAHEAD)
        )
        writing: Future[FileResult] | None = None
        while parsing:
            parsed = parsing.popleft().result()
            for path in islice(upcoming, 1):
                parsing.append(reader.submit(_parse, path, stored, settings))
            if isinstance(parsed, FileResult):
                done(parsed)
                continue
            vectors = embedder.embed([c.text for c in parsed.chunks])
            if writing:
                done(writing.result())
            writing = writer.submit(_write, parsed, vectors, collection, stored, store)
        if writing:
            done(writing.result())
    if prune:
        for source in sorted(stored):
            if not Path(source).exists():
                removed = store.delete_document(collection, source)
                results.append(FileResult(source, "pruned", chunks=removed))
    store.flush(collection)
    return IngestReport(results)


def _parse(path: Path, stored: dict[str, str], settings: Settings) -> ParsedFile | FileResult:
    """The file's chunks, or its result when it is unchanged or cannot be read."""
    source = str(path)
    try:
        doc_hash = hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as e:
        return FileResult(source, "failed", error=f"cannot read: {e.strerror or e}")
    if stored.get(source) == doc_hash:
        return FileResult(source, "unchanged")
    try:
        document = load(path)
    except LoadError as e:
        return FileResult(source, "failed", error=str(e))
    chunks = chunk_document(document, settings.chunk_chars, settings.chunk_overlap)
    return ParsedFile(path, doc_hash, document.title, chunks)


def _write(
    parsed: ParsedFile,
    vectors: list[list[float]],
    collection: str,
    stored: dict[str, str],
    store: Store,
) -> FileResult:
    source = str(parsed.path)
    stored_chunks = [
        StoredChunk(
            id=chunk_id(source, c.position, c.text),
            text=c.text,
            vector=vector,
            source=source,
            title=parsed.title,
            position=c.position,
            doc_hash=parsed.doc_hash,
            metadata={"heading": c.heading, "file_type": parsed.path.suffix.lower()},
        )
        for c, vector in zip(parsed.chunks, vectors, strict=True)
    ]
    store.replace_document(collection, source, stored_chunks)
    return FileResult(source, "updated" if source in stored else "added", chunks=len(stored_chunks))
