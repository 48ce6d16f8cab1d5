"""The folders MCP's ingest tool may read: the server's --allow folders (setting
mcp_ingest_folders) and the roots the client shares. An assistant steered by a document must
not ingest the user's other files."""

import warnings
from pathlib import Path
from urllib.parse import urlsplit
from urllib.request import url2pathname

import anyio.from_thread
from mcp import types
from mcp.server.mcpserver import Context
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError

from deepsift.api.ingest import is_inside
from deepsift.config import Settings
from deepsift.errors import UserError

MAX_PATH_BYTES, MAX_NAME_BYTES = 4095, 255  # Linux's PATH_MAX and NAME_MAX


def allowed_folders(settings: Settings, ctx: Context) -> list[Path]:
    """The folders the tool may read, resolved."""
    folders = [*settings.mcp_ingest_folders, *_client_roots(ctx)]
    return [folder.expanduser().resolve() for folder in folders]


def _client_roots(ctx: Context) -> list[Path]:
    """The folders the client shares as MCP roots (file:// URIs), when it has the capability."""
    wants = types.ClientCapabilities(roots=types.RootsCapability())
    if not ctx.session.check_client_capability(wants):
        return []
    try:
        with warnings.catch_warnings():  # roots leave the spec after 2026-07-28; clients use them
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            listed = anyio.from_thread.run(ctx.session.list_roots)
    except MCPError:  # a connection that cannot ask the client (the 2026-07-28 protocol)
        return []
    uris = [urlsplit(str(root.uri)) for root in listed.roots]
    return [Path(url2pathname(uri.path)) for uri in uris if uri.scheme == "file"]


def allowed_path(path: str, allowed: list[Path]) -> Path:
    """`path` when it is absolute and inside an allowed folder; else a UserError that says what
    to allow."""
    if "\x00" in path:
        raise UserError("paths: a path holds a NUL byte; give plain file paths")
    given = Path(path).expanduser()
    if len(bytes(given)) > MAX_PATH_BYTES or any(
        len(p.encode()) > MAX_NAME_BYTES for p in given.parts
    ):
        raise UserError(f"paths: {path[:60]!r}... is longer than a file system allows")
    if not given.is_absolute():
        raise UserError(f"paths: {path!r} is not absolute; give absolute paths")
    if not allowed:
        raise UserError(
            "paths: this server may read no folder: start it with deepsift mcp --allow FOLDER "
            "(setting mcp_ingest_folders), or share the folder as a root from the client"
        )
    if not is_inside(given, allowed):
        folders = ", ".join(str(folder) for folder in allowed)
        raise UserError(
            f"paths: {path!r} is outside the folders this server may read ({folders}): allow "
            "its folder with deepsift mcp --allow FOLDER, or share it as a root from the client"
        )
    return given
