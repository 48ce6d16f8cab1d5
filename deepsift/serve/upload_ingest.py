"""An upload to the web app: its files received, checked and saved (deepsift.serve.uploads),
then ingested through deepsift.api.ingest, its events streamed as server-sent events: start,
file (one per file), chunks, and done (the counts) or error."""

import asyncio
import json
import queue
import threading
from collections.abc import AsyncIterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

from starlette.datastructures import UploadFile
from starlette.exceptions import HTTPException
from starlette.requests import Request

from deepsift.api.ingest import ChunksDone, FileDone, Finished, IngestEvent, Started, ingest
from deepsift.config import Settings
from deepsift.deps import Deps
from deepsift.serve.runs import one_line_error
from deepsift.serve.uploads import UploadRefused, check_clashes, check_type, save, upload_folder

MAX_UPLOAD_FILES = 200
POLL = 0.05  # seconds between looks at the ingest's events while streaming them


async def receive_files(request: Request, settings: Settings, collection: str) -> list[Path]:
    """The request's files, checked (type, total size) and saved in the collection's upload
    folder; UploadRefused says what was wrong, before anything is written."""
    limit = settings.serve_max_upload_bytes
    length = request.headers.get("content-length", "")
    if not length.isdigit():
        raise UploadRefused("an upload must say its size (Content-Length)", 411)
    if int(length) > limit + 64_000:  # the form's own bytes beside the files
        raise UploadRefused(_too_large(int(length), limit), 413)
    folder = upload_folder(settings.data_dir, collection)
    try:
        form = await request.form(max_files=MAX_UPLOAD_FILES, max_fields=10)
    except HTTPException as e:  # Starlette's own refusal of the form, in plain text
        raise UploadRefused(f"the upload's form was refused: {e.detail}", e.status_code) from None
    files = [item for _, item in form.multi_items() if isinstance(item, UploadFile)]
    if not files:
        raise UploadRefused("no files in the upload (form field 'files')")
    named = [check_type(item.filename or "") for item in files]
    contents = [await item.read() for item in files]
    total = sum(len(data) for data in contents)
    if total > limit:
        raise UploadRefused(_too_large(total, limit), 413)
    uploaded = list(zip(named, contents, strict=True))
    check_clashes(folder, uploaded, replace=request.query_params.get("replace") == "true")
    return [save(folder, name, data) for name, data in uploaded]


def _too_large(size: int, limit: int) -> str:
    return (
        f"the upload is {size:,} bytes, over serve_max_upload_bytes ({limit:,}); upload fewer "
        "files at once, or raise DEEPSIFT_SERVE_MAX_UPLOAD_BYTES"
    )


async def ingest_events(
    paths: list[Path],
    collection: str,
    description: str | None,
    deps: Deps,
    settings: Settings,
    replace_description: bool = False,
) -> AsyncIterator[str]:
    """Ingest `paths` in a worker thread, streaming its events as server-sent events; a
    collection keeps the description it has unless `replace_description`."""
    events: queue.Queue[tuple[str, dict[str, Any]] | None] = queue.Queue()
    folder = upload_folder(settings.data_dir, collection).resolve()

    def shown(source: str) -> str:
        """A file as the upload named it: its path in the collection's upload folder."""
        path = Path(source)
        return str(path.relative_to(folder)) if path.is_relative_to(folder) else path.name

    def put(event: IngestEvent) -> None:
        match event:
            case Started(files=files):
                events.put(("start", {"files": files}))
            case FileDone(result=result):
                events.put(("file", {**asdict(result), "source": shown(result.source)}))
            case ChunksDone(source=source, done=done, total=total):
                events.put(("chunks", {"source": shown(source), "done": done, "total": total}))
            case Finished(report=report):
                counts = {s: report.count(s) for s in ("added", "updated", "unchanged", "failed")}
                events.put(("done", {**counts, "chunks": report.new_chunks}))

    def work() -> None:
        nonlocal description
        try:
            kept = deps.store.description(collection) if deps.store.exists(collection) else ""
            if description and kept and description != kept and not replace_description:
                events.put(("kept", {"description": kept}))
                description = None
            ingest(
                paths,
                collection,
                deps.store,
                settings,
                embedder=deps.embedder,
                description=description,
                on_event=put,
            )
        except Exception as e:  # the ingest's failure is its error event
            events.put(("error", {"message": one_line_error(e)}))
        finally:
            events.put(None)

    threading.Thread(target=work, name="deepsift-ingest", daemon=True).start()
    while True:
        try:
            item = events.get_nowait()
        except queue.Empty:
            await asyncio.sleep(POLL)
            continue
        if item is None:
            return
        name, data = item
        yield f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"
