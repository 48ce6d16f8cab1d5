"""`deepsift serve`: the web app (app.py), its research-run queue (runs.py), uploads
(uploads.py) and the page it serves (static/, hand-written, no build step, nothing from a CDN)."""
