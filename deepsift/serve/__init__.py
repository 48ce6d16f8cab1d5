"""`deepsift serve`: the web app (app.py), its research-run queue (runs.py), uploads
(uploads.py) and the page it serves (static/, hand-written, no build step, nothing from a CDN);
and `deepsift mcp`, the MCP server (mcp.py).

May import the Python API (api), the agents and everything below them; never eval or cli.
"""
