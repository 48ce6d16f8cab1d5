"""`deepsift ingest`: add files, folders or pages by URL to a collection, with a progress bar and
a summary."""

import argparse
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from rich.markup import escape
from rich.progress import Progress
from rich.table import Table

from deepsift.cli.arguments import positive
from deepsift.cli.console import err, transient_progress
from deepsift.config import Settings
from deepsift.errors import UserError

if TYPE_CHECKING:
    from deepsift.api.ingest import IngestEvent


def add_parser(commands: argparse._SubParsersAction) -> None:
    ingest = commands.add_parser(
        "ingest", help="add files, folders or web pages (http(s) URLs) to a collection"
    )
    ingest.add_argument(
        "paths",
        nargs="*",
        metavar="PATH|URL",
        help="files and folders (read recursively), and web pages by http(s) URL",
    )
    ingest.add_argument(
        "--urls", type=Path, metavar="FILE", help="a file of URLs to ingest, one a line"
    )
    ingest.add_argument(
        "--collection",
        required=True,
        metavar="NAME",
        help="the collection to add to, made on first use (letters, digits and _)",
    )
    ingest.add_argument("--description", help="what the collection holds (used for routing)")
    ingest.add_argument(
        "--prune",
        action="store_true",
        help="remove files that no longer exist, and (in a run with URLs) pages no longer listed",
    )
    ingest.add_argument(
        "--ray",
        nargs="?",
        const="local",
        metavar="ADDRESS",
        help="load, chunk and embed on Ray: 'local' (the default: a runtime on this machine), "
        "'auto' (the cluster this machine belongs to) or a cluster address (setting "
        "ray_address)",
    )
    ingest.add_argument(
        "--ray-workers", type=positive, metavar="N", help="embedding actors (setting ray_workers)"
    )
    ingest.set_defaults(run=run_ingest)


def run_ingest(args: argparse.Namespace, settings: Settings) -> int:
    from deepsift.api.ingest import ingest
    from deepsift.store import Store, check_collection_name
    from deepsift.text.locations import is_url

    check_collection_name(args.collection)
    paths = [Path(item) for item in args.paths if not is_url(item)]
    urls = [item for item in args.paths if is_url(item)]
    if args.urls:
        from deepsift.web.pages import read_url_list  # the web stack, only for URLs

        urls += read_url_list(args.urls)
    if not paths and not urls and not args.urls:
        raise UserError("ingest needs files, folders or URLs: give PATH or URL, or --urls FILE")
    missing = [str(path) for path in paths if not path.exists()]
    if missing:
        raise UserError(f"no such file or folder: {', '.join(missing)}")
    store = Store(settings)
    new = not store.exists(args.collection)
    started = time.monotonic()
    with store, transient_progress(elapsed=True) as progress:
        finished = ingest(
            paths,
            args.collection,
            store,
            settings,
            urls=urls,
            description=args.description,
            prune=args.prune,
            on_event=_progress_bar(progress),
        )
        created = new and store.exists(args.collection)
    seconds = time.monotonic() - started
    report = finished.report
    table = Table(title=f"ingest into {args.collection}", title_justify="left")
    for column in ("added", "updated", "unchanged", "pruned", "failed", "new chunks", "seconds"):
        table.add_column(column, justify="right")
    counts = [report.count(s) for s in ("added", "updated", "unchanged", "pruned", "failed")]
    table.add_row(*map(str, counts), str(report.new_chunks), f"{seconds:.1f}")
    err.print(table)
    if finished.nothing and not report.files:  # else each failed file said why as it came
        err.print(escape(finished.nothing), highlight=False, soft_wrap=True)
    if created and args.description is None:
        err.print(
            f"note: {args.collection} has no description; the router chooses collections by "
            "their descriptions, so add one with --description on a later ingest",
            highlight=False,
            soft_wrap=True,
        )
    return 1 if finished.nothing else 0


def _progress_bar(progress: Progress) -> "Callable[[IngestEvent], None]":
    """Draw the ingest's events: a bar of files and the new chunks so far (a large file's
    chunks as they are embedded), a line for each file skipped."""
    from deepsift.api.ingest import ChunksDone, FileDone, Started
    from deepsift.text.locations import display_path

    task = progress.add_task("loading the embedding model", total=None)
    chunks = 0

    def draw(event: "IngestEvent") -> None:
        nonlocal chunks
        match event:
            case Started(files=total):
                progress.update(task, total=total, description="files  0 new chunks")
            case FileDone(result=result) if result.status == "failed":
                progress.console.print(
                    f"[yellow]skipped[/yellow] {escape(display_path(result.source))}: "
                    f"{escape(result.error)}",
                    highlight=False,
                    soft_wrap=True,
                )
            case FileDone(result=result):
                chunks += result.chunks if result.status in ("added", "updated") else 0
                progress.advance(task)
                progress.update(task, description=f"files  {chunks} new chunks")
            case ChunksDone(source=source, done=done, total=total) if total > done:
                name = escape(display_path(source))  # the description is markup
                description = f"files  {chunks} new chunks  {name}: {done:,}/{total:,} chunks"
                progress.update(task, description=description)

    return draw
