"""`deepsift mcp`: the tools over the Model Context Protocol, on stdin and stdout."""

import argparse
from pathlib import Path

from deepsift.config import Settings
from deepsift.errors import UserError


def add_parser(commands: argparse._SubParsersAction) -> None:
    mcp = commands.add_parser(
        "mcp", help="research, ingest and reports for MCP clients (assistants, editors), on stdio"
    )
    mcp.add_argument(
        "--allow",
        action="append",
        type=Path,
        metavar="FOLDER",
        help="a folder the ingest tool may read (again for more; besides the client's roots; "
        "setting mcp_ingest_folders)",
    )
    mcp.set_defaults(run=run_mcp)


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
