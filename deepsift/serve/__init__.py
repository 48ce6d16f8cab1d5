"""`deepsift serve`: the web app (app.py), who it answers (guard.py), its research-run queue
(runs.py), uploads (uploads.py) and their ingest as server-sent events (upload_ingest.py), and
the page it serves (static/, hand-written, no build step, nothing from a CDN); and `deepsift
mcp`, the MCP server (mcp.py), its tools' answers (mcp_results.py) and the folders its ingest
may read (mcp_folders.py). Every ingest goes through deepsift.api.ingest.

May import the Python API (api), the agents and everything below them; never eval or cli.
"""

import ipaddress


def is_loopback(host: str) -> bool:
    """localhost, or an address of the loopback network (127.0.0.0/8, ::1): the names a
    server without a token answers on, and binds to."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
