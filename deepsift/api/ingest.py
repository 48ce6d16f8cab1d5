"""The one ingest of every front end: files, folders and pages by URL into a collection, on Ray
when the settings say so, one ingest at a time in a process. Its progress comes as events
(Started, FileDone, ChunksDone, then Finished) that the CLI, the web app and MCP each draw their
own way; Finished says why when nothing was ingested, and a collection made for nothing is
dropped."""

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from deepsift.config import Settings
from deepsift.errors import UserError
from deepsift.ingest.loaders import SUPPORTED
from deepsift.ingest.pipeline import FileResult, IngestReport, find_files
from deepsift.ingest.pipeline import ingest as ingest_files
from deepsift.llm.embedders import Embedder, get_embedder
from deepsift.store import Store, check_collection_name


@dataclass(frozen=True)
class Started:
    files: int  # the files and pages to read


@dataclass(frozen=True)
class FileDone:
    result: FileResult


@dataclass(frozen=True)
class ChunksDone:
    """A file's chunks embedded so far (local ingest only: Ray returns a file's all at once)."""

    source: str
    done: int
    total: int


@dataclass(frozen=True)
class Finished:
    report: IngestReport
    nothing: str  # "nothing was ingested: why"; "" when something was (or was up to date)


IngestEvent = Started | FileDone | ChunksDone | Finished

OUTSIDE = "leads outside the allowed folders"
# Two ingests in one process (web uploads, MCP calls) would write the same store's files.
_one_at_a_time = threading.Lock()


def ingest(
    paths: Sequence[Path],
    collection: str,
    store: Store,
    settings: Settings,
    *,
    embedder: Embedder | None = None,
    urls: Sequence[str] = (),
    description: str | None = None,
    prune: bool = False,
    inside: Sequence[Path] | None = None,
    on_event: Callable[[IngestEvent], None] = lambda event: None,
) -> Finished:
    """Ingest `paths` (files, folders) and `urls` into `collection`, creating it if needed.
    `embedder`: loaded here when not given, after the arguments are checked.
    `inside`: resolved folders that every file, links followed, must lie in; a file found
    elsewhere fails (an assistant steered by a document must not read the user's other files)."""
    check_collection_name(collection)
    if urls and settings.ray_address:
        raise UserError("URLs are ingested without --ray: ingest them in a run of their own")
    refused: list[FileResult] = []
    if inside is not None:
        paths, refused = _only_inside(paths, inside)
    if embedder is None:
        embedder = get_embedder(settings)

    def started(total: int) -> None:
        on_event(Started(total + len(refused)))

    def file_done(result: FileResult) -> None:
        on_event(FileDone(result))

    with _one_at_a_time:
        existed = store.exists(collection)
        run = _runner(urls, settings, on_event)
        report = run(
            paths,
            collection,
            store,
            embedder,
            settings,
            description=description,
            prune=prune,
            on_file=file_done,
            on_start=started,
        )
        for result in refused:
            report.files.append(result)
            file_done(result)
        nothing = nothing_ingested(report)
        if nothing and not existed and store.exists(collection):
            store.drop(collection)  # made by this ingest, nothing put in it: not left behind
    finished = Finished(report, nothing)
    on_event(finished)
    return finished


def _runner(
    urls: Sequence[str], settings: Settings, on_event: Callable[[IngestEvent], None]
) -> Callable[..., IngestReport]:
    """The pipeline to run: on Ray (settings.ray_address), else here, with chunk progress."""
    if settings.ray_address:
        from deepsift.ingest.on_ray import ingest_on_ray  # Ray only when asked for

        return ingest_on_ray
    pages = None
    if urls:
        from deepsift.web.pages import WebPages  # the web stack, only for URLs

        pages = WebPages(list(urls), settings)

    def chunks_done(source: str, done: int, total: int) -> None:
        on_event(ChunksDone(source, done, total))

    return partial(ingest_files, on_chunks=chunks_done, pages=pages)


def _only_inside(
    paths: Sequence[Path], folders: Sequence[Path]
) -> tuple[list[Path], list[FileResult]]:
    """The files under `paths` that lie inside `folders`, and the results of the rest: a link
    inside an allowed folder may lead out of it, and a path may be missing."""
    found, failed = find_files(paths)
    kept = [f for f in found if is_inside(f, folders)]
    outside = [FileResult(str(f), "failed", error=OUTSIDE) for f in found if f not in kept]
    return kept, failed + outside


def is_inside(path: Path, folders: Sequence[Path]) -> bool:
    """Whether `path`, links followed, lies in one of `folders` (resolved already)."""
    real = path.resolve()
    return any(real.is_relative_to(folder) for folder in folders)


def nothing_ingested(report: IngestReport) -> str:
    """Why nothing was ingested (every file failed, or none was found); "" when something was."""
    if any(f.status != "failed" for f in report.files):
        return ""
    reasons = "; ".join(f"{f.source}: {f.error}" for f in report.files[:3])
    kinds = " ".join(sorted(SUPPORTED))
    return "nothing was ingested: " + (
        reasons or f"no file of a type it reads ({kinds}) under the paths"
    )
