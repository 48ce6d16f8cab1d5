"""`deepsift collections`: list the collections, drop one, or re-embed one."""

import argparse
import json
from typing import TYPE_CHECKING

from rich.table import Table

from deepsift.cli.console import err, out, transient_progress
from deepsift.config import Settings
from deepsift.errors import UserError

if TYPE_CHECKING:
    from deepsift.store import Store


def add_parser(commands: argparse._SubParsersAction) -> None:
    collections = commands.add_parser(
        "collections", help="list collections, drop one, or re-embed one with the current embedder"
    )
    collections.add_argument(
        "action",
        nargs="?",
        choices=["drop", "reembed"],
        help="drop: delete collection NAME; reembed: rebuild its vectors with the configured "
        "embedder (none: list the collections)",
    )
    collections.add_argument("name", nargs="?", help="the collection to drop or re-embed")
    collections.add_argument(
        "--json",
        action="store_true",
        help="print a JSON list: name, description, documents, chunks, embedding_model",
    )
    collections.set_defaults(run=run_collections)


def run_collections(args: argparse.Namespace, settings: Settings) -> int:
    from deepsift.store import Store

    with Store(settings) as store:
        if args.action and not args.name:
            raise UserError(f"usage: deepsift collections {args.action} NAME")
        if args.action == "drop":
            store.drop(args.name)
            err.print(f"dropped collection {args.name}")
            return 0
        if args.action == "reembed":
            return _reembed(store, args.name, settings)
        infos = [store.info(name) for name in store.names()]
    if args.json:
        print(json.dumps([info.model_dump() for info in infos], indent=2))
        return 0
    table = Table("name", "description", "documents", "chunks", "embedding model")
    for info in infos:
        table.add_row(
            info.name, info.description, str(info.documents), str(info.chunks), info.embedding_model
        )
    out.print(table if infos else "no collections yet: deepsift ingest PATH --collection NAME")
    return 0


def _reembed(store: "Store", name: str, settings: Settings) -> int:
    from deepsift.llm.embedders import get_embedder

    embedder = get_embedder(settings)
    with transient_progress() as progress:
        task = progress.add_task(f"re-embedding {name} with {embedder.name}", total=None)
        done = store.reembed(
            name, embedder, lambda done, total: progress.update(task, completed=done, total=total)
        )
    err.print(f"re-embedded {done:,} chunks of {name} with {embedder.name}")
    return 0
