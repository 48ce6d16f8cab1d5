"""`deepsift ingest`: add files, folders or pages by URL to a collection, with a progress bar and
a summary."""

import argparse
import time
from functools import partial
from pathlib import Path

from rich.markup import escape
from rich.table import Table

from deepsift.cli.arguments import positive
from deepsift.cli.console import err, transient_progress
from deepsift.config import Settings
from deepsift.errors import UserError


def add_parser(commands: argparse._SubParsersAction) -> None:
    ingest = commands.add_parser(
        "ingest", help="add files, folders or web pages (http(s) URLs) to a collection"
    )
    ingest.add_argument("paths", nargs="*", metavar="PATH|URL")
    ingest.add_argument(
        "--urls", type=Path, metavar="FILE", help="a file of URLs to ingest, one a line"
    )
    ingest.add_argument("--collection", required=True)
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
    from deepsift.ingest.pipeline import FileResult, ingest
    from deepsift.llm.embedders import get_embedder
    from deepsift.store import Store, check_collection_name
    from deepsift.text.locations import display_path, is_url

    check_collection_name(args.collection)
    paths = [Path(item) for item in args.paths if not is_url(item)]
    urls = [item for item in args.paths if is_url(item)]
    pages = None
    if args.urls or urls:
        from deepsift.web.pages import WebPages, read_url_list  # the web stack, only for URLs

        pages = WebPages(urls + (read_url_list(args.urls) if args.urls else []), settings)
    if not paths and not pages:
        raise UserError("ingest needs files, folders or URLs: give PATH or URL, or --urls FILE")
    if pages and settings.ray_address:
        raise UserError("URLs are ingested without --ray: ingest them in a run of their own")
    store = Store(settings)
    if args.description is None and not store.exists(args.collection):
        err.print(
            f"note: {args.collection} has no description; the router chooses collections by "
            "their descriptions, so add one with --description on a later ingest",
            highlight=False,
            soft_wrap=True,
        )
    started = time.monotonic()
    with store, transient_progress(elapsed=True) as progress:
        task = progress.add_task("loading the embedding model", total=None)
        chunks = 0

        def on_start(total: int) -> None:
            progress.update(task, total=total, description="files  0 new chunks")

        def on_file(result: FileResult) -> None:
            nonlocal chunks
            if result.status == "failed":
                progress.console.print(
                    f"[yellow]skipped[/yellow] {escape(display_path(result.source))}: "
                    f"{escape(result.error)}",
                    highlight=False,
                    soft_wrap=True,
                )
            else:
                chunks += result.chunks if result.status in ("added", "updated") else 0
                progress.advance(task)
            progress.update(task, description=f"files  {chunks} new chunks")

        def on_chunks(source: str, done: int, total: int) -> None:
            if total > done:  # a large file: its chunks' progress, until it is written
                name = escape(display_path(source))  # the description is markup
                description = f"files  {chunks} new chunks  {name}: {done:,}/{total:,} chunks"
                progress.update(task, description=description)

        embedder = get_embedder(settings)
        if settings.ray_address:  # no chunk progress: a file's chunks come back all at once
            from deepsift.ingest.on_ray import ingest_on_ray as run
        else:
            run = partial(ingest, on_chunks=on_chunks, pages=pages)
        report = run(
            paths,
            args.collection,
            store,
            embedder,
            settings,
            description=args.description,
            prune=args.prune,
            on_file=on_file,
            on_start=on_start,
        )
    seconds = time.monotonic() - started
    table = Table(title=f"ingest into {args.collection}", title_justify="left")
    for column in ("added", "updated", "unchanged", "pruned", "failed", "new chunks", "seconds"):
        table.add_column(column, justify="right")
    counts = [report.count(s) for s in ("added", "updated", "unchanged", "pruned", "failed")]
    table.add_row(*map(str, counts), str(report.new_chunks), f"{seconds:.1f}")
    err.print(table)
    return 0 if report.succeeded else 1
