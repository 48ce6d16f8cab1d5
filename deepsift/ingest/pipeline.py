"""Ingest files into a collection: skip unchanged files, replace changed ones, prune deleted."""

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from deepsift.config import Settings
from deepsift.ingest.chunking import chunk_document
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
    files, results = find_files(paths)
    store.ensure(collection, description, embedder)
    stored = store.documents(collection)
    on_start(len(files))
    for result in results:
        on_file(result)
    for path in files:
        result = _ingest_file(path, collection, stored, store, embedder, settings)
        results.append(result)
        on_file(result)
    if prune:
        for source in sorted(stored):
            if not Path(source).exists():
                removed = store.delete_document(collection, source)
                results.append(FileResult(source, "pruned", chunks=removed))
    store.flush(collection)
    return IngestReport(results)


def _ingest_file(
    path: Path,
    collection: str,
    stored: dict[str, str],
    store: Store,
    embedder: Embedder,
    settings: Settings,
) -> FileResult:
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
    vectors = embedder.embed([c.text for c in chunks])
    stored_chunks = [
        StoredChunk(
            id=chunk_id(source, c.position, c.text),
            text=c.text,
            vector=vector,
            source=source,
            title=document.title,
            position=c.position,
            doc_hash=doc_hash,
            metadata={"heading": c.heading, "file_type": path.suffix.lower()},
        )
        for c, vector in zip(chunks, vectors, strict=True)
    ]
    store.replace_document(collection, source, stored_chunks)
    return FileResult(source, "updated" if source in stored else "added", chunks=len(stored_chunks))
