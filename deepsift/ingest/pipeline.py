"""Ingest files (and pages by URL) into a collection: skip unchanged ones, replace changed ones,
prune deleted ones."""

import hashlib
import os
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from itertools import islice
from pathlib import Path
from typing import Literal, Protocol

from deepsift.config import Settings
from deepsift.ingest.chunking import TextChunk, chunk_document
from deepsift.ingest.document import LoadError
from deepsift.ingest.loaders import SUPPORTED, load
from deepsift.llm.embedders import Embedder
from deepsift.store import Store, StoredChunk
from deepsift.text.locations import is_url

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
    """Expand folders recursively; a missing path or an unreadable folder is a failure of its
    own, not of the run. Linked folders are not followed, so a symlink loop ends."""
    files: list[Path] = []
    failed: list[FileResult] = []
    for path in paths:
        if path.is_dir():
            files.extend(_files_under(path, failed))
        elif path.exists():
            files.append(path.resolve())
        else:
            failed.append(FileResult(str(path), "failed", error="no such file or folder"))
    return list(dict.fromkeys(files)), failed


def _files_under(folder: Path, failed: list[FileResult]) -> list[Path]:
    def unreadable(e: OSError) -> None:
        failed.append(FileResult(e.filename, "failed", error=f"cannot read folder: {e.strerror}"))

    found = [
        Path(root, name)
        for root, _, names in os.walk(folder, onerror=unreadable)
        for name in names
        if Path(name).suffix.lower() in SUPPORTED and not name.startswith(".")
    ]
    for link in (p for p in found if p.is_symlink() and not p.exists()):  # said, not skipped
        failed.append(
            FileResult(
                str(link), "failed", error=f"a link to {os.readlink(link)}, which is not there"
            )
        )
    return sorted(p.resolve() for p in found if p.is_file())


# Bumped when loading or chunking changes what a file's chunks are: each document's hash holds
# it, so the next ingest redoes every file once instead of keeping chunks made the old way.
# 2: a document that does not open with a heading is titled by its file name.
# 3: each chunk carries its document's facts (deepsift.ingest.facts).
# 4: front matter stays out of the body's chunks (it is the document's facts).
# 5: the documents a document replaces, and those that replace it, kept as facts of their own.
# 6: front matter's fields searched with the first chunk (a header under its context line);
#    a body that opens with a section heading is titled by its file name.
PARSING = 6


def document_hash(data: bytes) -> str:
    """What tells an unchanged file: its bytes, as this version of deepsift parses them."""
    return hashlib.sha256(f"deepsift-parsing-{PARSING}\x00".encode() + data).hexdigest()


def chunk_id(source: str, position: int, text: str) -> str:
    return hashlib.sha256(f"{source}\x00{position}\x00{text}".encode()).hexdigest()[:32]


@dataclass
class ParsedFile:
    """A changed file (or page), loaded and chunked, waiting for its vectors."""

    source: str  # the file's absolute path, or the page's URL
    doc_hash: str
    title: str
    chunks: list[TextChunk]
    file_type: str  # ".md", ".pdf", ...; a page: ".html"
    facts: dict[str, object] = field(default_factory=dict)  # deepsift.ingest.facts


class Pages(Protocol):
    """URLs an ingest stores as documents: deepsift.web.pages, which the web stack comes with."""

    urls: list[str]

    def parsed(self, url: str, stored: dict[str, str]) -> ParsedFile | FileResult:
        """The page's chunks, or its result when it is unchanged or cannot be fetched."""
        ...


LOOKAHEAD = 2  # files parsed ahead of the embedder: overlap without unbounded memory
WRITE_BATCH = 256  # chunks embedded and written at a time: a file of any size in bounded memory


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
    on_chunks: Callable[[str, int, int], None] = lambda source, done, total: None,
    pages: "Pages | None" = None,
) -> IngestReport:
    """Parse, embed and write files as a pipeline: while one batch of chunks is embedded, the
    next files are parsed and the last batch is written, so the embedder (the slowest stage)
    never waits. `on_chunks(source, embedded, total)` follows the chunks of the current file.
    `pages`: URLs to fetch and store with the URL as source (deepsift.web.pages)."""
    files, results, stored, created = start_ingest(paths, collection, store, embedder, description)
    urls = pages.urls if pages else []

    def parse(item: Path | str) -> ParsedFile | FileResult:
        if isinstance(item, str):
            return pages.parsed(item, stored)
        return _parse(item, stored, settings)

    on_start(len(files) + len(urls))
    for result in results:
        on_file(result)

    def done(result: FileResult) -> None:
        results.append(result)
        on_file(result)

    with ThreadPoolExecutor(1) as reader, ThreadPoolExecutor(1) as writer:
        upcoming = iter([*files, *urls])
        parsing = deque(reader.submit(parse, item) for item in islice(upcoming, LOOKAHEAD))
        writing: Future[FileResult | None] | None = None

        def wait_for_writer() -> None:
            if writing and (result := writing.result()):
                done(result)

        def write(task: Callable[[], FileResult | None]) -> None:
            nonlocal writing
            wait_for_writer()
            writing = writer.submit(task)

        while parsing:
            parsed = parsing.popleft().result()
            for item in islice(upcoming, 1):
                parsing.append(reader.submit(parse, item))
            if isinstance(parsed, FileResult):
                done(parsed)
                continue
            source, total = parsed.source, len(parsed.chunks)
            first: StoredChunk | None = None
            for start in range(0, total, WRITE_BATCH):
                batch = parsed.chunks[start : start + WRITE_BATCH]
                rows = stored_chunks(parsed, batch, embedder.embed([c.text for c in batch]))
                write(partial(store.write_chunks, collection, rows))
                first = first or rows[0]
                on_chunks(source, start + len(batch), total)
            write(partial(complete_file, parsed, first, collection, stored, store))
        wait_for_writer()
    if prune:
        results += prune_missing(collection, stored, store, urls)
    return finish_ingest(collection, results, store, created)


def start_ingest(
    paths: Iterable[Path],
    collection: str,
    store: Store,
    embedder: Embedder,
    description: str | None,
) -> tuple[list[Path], list[FileResult], dict[str, str], bool]:
    """An ingest's start: the files to read, the paths that failed already, the documents the
    collection holds, and whether it was created now."""
    files, results = find_files(paths)
    created = not store.exists(collection)
    store.ensure(collection, description, embedder)
    return files, results, store.documents(collection), created


def finish_ingest(
    collection: str, results: list[FileResult], store: Store, created: bool
) -> IngestReport:
    """The ingest's report, once its chunks are flushed; a collection it created and put
    nothing in (every file failed) is dropped, not left behind empty."""
    report = IngestReport(results)
    if created and not report.succeeded:
        store.drop(collection)
    else:
        store.flush(collection)
    return report


def prune_missing(
    collection: str, stored: dict[str, str], store: Store, urls: Sequence[str] = ()
) -> list[FileResult]:
    """Drop the stored documents whose files are gone, and, in a run that lists URLs, the pages
    it no longer lists (a run of files only keeps every page)."""
    results = []
    for source in sorted(stored):
        if is_url(source):
            gone = bool(urls) and source not in urls
        else:
            gone = not Path(source).exists()
        if gone:
            removed = store.delete_document(collection, source)
            results.append(FileResult(source, "pruned", chunks=removed))
    return results


def _parse(path: Path, stored: dict[str, str], settings: Settings) -> ParsedFile | FileResult:
    """The file's chunks, or its result when it is unchanged or cannot be read."""
    hashed = changed_hash(path, stored, settings)
    return hashed if isinstance(hashed, FileResult) else parsed_file(path, hashed, settings)


def changed_hash(path: Path, stored: dict[str, str], settings: Settings) -> str | FileResult:
    """The hash of a file to ingest, or its result when it is unchanged or cannot be read."""
    source = str(path)
    try:
        size = path.stat().st_size
        if size > settings.max_file_bytes:
            return FileResult(
                source,
                "failed",
                error=f"{size:,} bytes, over max_file_bytes ({settings.max_file_bytes:,}): "
                "raise DEEPSIFT_MAX_FILE_BYTES to ingest it",
            )
        doc_hash = document_hash(path.read_bytes())
    except OSError as e:
        return FileResult(source, "failed", error=f"cannot read: {e.strerror or e}")
    if stored.get(source) == doc_hash:
        return FileResult(source, "unchanged")
    return doc_hash


def parsed_file(path: Path, doc_hash: str, settings: Settings) -> ParsedFile | FileResult:
    """A changed file loaded and chunked, or its result when it cannot be read."""
    try:
        document = load(path)
        chunks = chunk_document(document, settings.chunk_chars, settings.chunk_overlap)
    except LoadError as e:
        return FileResult(str(path), "failed", error=str(e))
    except Exception as e:  # noqa: BLE001 - one file's input (MemoryError, RecursionError too)
        return FileResult(str(path), "failed", error=f"cannot parse ({_one_line(e)})")
    return ParsedFile(
        str(path), doc_hash, document.title, chunks, path.suffix.lower(), document.facts
    )


def _one_line(error: BaseException) -> str:
    """An error as one short line: its type, then its message's first line."""
    said = str(error).strip().splitlines()
    return f"{type(error).__name__}: {said[0][:200]}" if said else type(error).__name__


def stored_chunks(
    parsed: ParsedFile, chunks: list[TextChunk], vectors: list[list[float]]
) -> list[StoredChunk]:
    source = parsed.source
    return [
        StoredChunk(
            id=chunk_id(source, c.position, c.text),
            text=c.text,
            vector=vector,
            source=source,
            title=parsed.title,
            position=c.position,
            doc_hash=parsed.doc_hash,
            # Each chunk carries its document's facts: they go and are rebuilt with its chunks.
            metadata={"heading": c.heading, "file_type": parsed.file_type, "facts": parsed.facts},
        )
        for c, vector in zip(chunks, vectors, strict=True)
    ]


def complete_file(
    parsed: ParsedFile,
    first: StoredChunk | None,
    collection: str,
    stored: dict[str, str],
    store: Store,
) -> FileResult:
    """After all of a file's chunks are written: drop its old chunks and mark it complete."""
    source = parsed.source
    ids = {chunk_id(source, c.position, c.text) for c in parsed.chunks}
    store.complete_document(collection, source, ids, first)
    return FileResult(source, "updated" if source in stored else "added", chunks=len(ids))
