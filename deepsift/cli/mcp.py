"""`deepsift mcp`: the tools over the Model Context Protocol, on stdin and stdout."""

import argparse

from deepsift.config import Settings
from deepsift.errors import UserError


def run_mcp(args: argparse.Namespace, settings: Settings) -> int:
    try:
        from deepsift.serve.mcp import serve
    except ImportError as e:
        raise UserError(
            f"deepsift mcp needs the mcp extra ({e.name} is missing): pip install -e '.[mcp]'"
        ) from None
    if args.allow:
        folders = [*settings.mcp_ingest_folders, *(folder.resolve() for folder in args.allow)]
        settings = settings.model_copy(update={"mcp_ingest_folders": folders})
    serve(settings)
    return 0
