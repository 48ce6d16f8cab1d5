"""`deepsift collections`: list the collections, or drop one."""

import argparse
import json

from rich.table import Table

from deepsift.cli.console import err, out
from deepsift.config import Settings
from deepsift.errors import UserError


def run_collections(args: argparse.Namespace, settings: Settings) -> int:
    from deepsift.store import Store

    with Store(settings) as store:
        if args.action == "drop":
            if not args.name:
                raise UserError("usage: deepsift collections drop NAME")
            store.drop(args.name)
            err.print(f"dropped collection {args.name}")
            return 0
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
