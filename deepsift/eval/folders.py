"""A folder of documents as an evaluation corpus: ingested by the real pipeline (loaders,
chunking, context lines, hybrid index) into the evaluation store, and runs scored by the
documents they rank."""

import hashlib
from collections.abc import Callable
from pathlib import Path

from deepsift.deps import Deps
from deepsift.errors import UserError
from deepsift.eval.datasets import EvalQuestion
from deepsift.ingest.pipeline import FileResult, IngestReport, find_files, ingest
from deepsift.records import Chunk

DOCUMENT_DEPTH = 20  # the distinct documents a results row keeps, in rank order
# One search over a folder: chunks enough to rank ten documents (a long document holds many
# of the best chunks).
NAIVE_CHUNKS = 100


def check_gold(questions: list[EvalQuestion], corpus: Path) -> None:
    """Every question names gold files, and each is a file of the folder."""
    for question in questions:
        if not question.gold_sources:
            raise UserError(f"question {question.id} has no gold_sources; --corpus needs them")
        for gold in question.gold_sources:
            if not (corpus / gold).is_file():
                raise UserError(
                    f"question {question.id}: gold source {gold!r} is not a file in {corpus}"
                )


def folder_collection(
    corpus: Path,
    deps: Deps,
    on_start: Callable[[int], None] = lambda total: None,
    on_file: Callable[[FileResult], None] = lambda result: None,
) -> tuple[str, IngestReport]:
    """The folder's collection, one per (folder, embedder), brought up to date the way
    `deepsift ingest --prune` does: an unchanged folder adds nothing, a changed file replaces
    its chunks, an interrupted build is finished."""
    if not corpus.is_dir():
        raise UserError(f"--corpus {corpus} is not a folder")
    folder = corpus.resolve()
    key = f"{folder}\x00{deps.embedder.name}"
    name = f"folder_{hashlib.sha256(key.encode()).hexdigest()[:12]}"
    description = f"the documents of {folder.name}"
    report = ingest(
        [folder],
        name,
        deps.store,
        deps.embedder,
        deps.settings,
        description=description,
        prune=True,
        on_file=on_file,
        on_start=on_start,
    )
    if not deps.store.documents(name):
        raise UserError(f"--corpus {corpus}: no document could be read")
    return name, report


def folder_digest(corpus: Path) -> str:
    """What the folder holds: the files ingest reads, and their contents' hashes."""
    folder = corpus.resolve()
    files, _ = find_files([folder])
    listing = "\n".join(
        f"{_relative(str(f), folder)}\x00{hashlib.sha256(f.read_bytes()).hexdigest()}"
        for f in files
    )
    return hashlib.sha256(listing.encode()).hexdigest()


def ranked_documents(chunks: list[Chunk], corpus: Path) -> list[str]:
    """The distinct files of a ranking of chunks, in the order their first chunk comes, as
    paths relative to the folder."""
    folder = corpus.resolve()
    return list(dict.fromkeys(_relative(chunk.source, folder) for chunk in chunks))


def _relative(source: str, folder: Path) -> str:
    try:
        return Path(source).relative_to(folder).as_posix()
    except ValueError:
        return source
