"""Ingest on a Ray cluster (`deepsift ingest --ray`). The driver lists and hashes the files and
skips the unchanged ones exactly as a local ingest does; loading, chunking and embedding the
changed ones run as a Ray Data pipeline, the embedder loaded once per worker actor; the driver
writes each file's chunks as they come back, with the local pipeline's ids, pending mark and
replace/prune rules (deepsift.ingest.pipeline), so a kill anywhere converges on rerun."""

import logging
import pickle
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from deepsift.config import Settings
from deepsift.errors import UserError
from deepsift.ingest.pipeline import (
    WRITE_BATCH,
    FileResult,
    IngestReport,
    ParsedFile,
    changed_hash,
    complete_file,
    finish_ingest,
    parsed_file,
    prune_missing,
    start_ingest,
    stored_chunks,
)
from deepsift.llm.embedders import Embedder
from deepsift.store import Store, StoredChunk

CPUS_PER_WORKER = 2  # an embedder's ONNX runtime uses two threads well; more gain little
LOCAL_STARTS = 3  # tries at starting a Ray runtime on this machine (see _connect)


def _embedding_actor(settings: Settings) -> type:
    """A Ray Data actor class that loads the embedder once, then turns changed files into their
    chunks and vectors: each file one row, its ParsedFile or FileResult and its vectors, pickled.
    The settings travel inside the class, so a restarted actor needs nothing from the driver."""

    class EmbedFiles:
        def __init__(self) -> None:
            from deepsift.llm.embedders import get_embedder

            self.embedder = get_embedder(settings)

        def __call__(self, files: dict[str, Any]) -> dict[str, list[bytes]]:
            done = []
            for path, doc_hash in zip(files["path"], files["doc_hash"], strict=True):
                parsed = parsed_file(Path(path), str(doc_hash), settings)
                vectors: list[list[float]] = []
                if isinstance(parsed, ParsedFile):
                    texts = [c.text for c in parsed.chunks]
                    for start in range(0, len(texts), WRITE_BATCH):
                        vectors += self.embedder.embed(texts[start : start + WRITE_BATCH])
                done.append(pickle.dumps((parsed, vectors)))
            return {"file": done}

    return EmbedFiles


def ingest_on_ray(
    paths: Iterable[Path],
    collection: str,
    store: Store,
    embedder: Embedder,
    settings: Settings,
    description: str | None = None,
    prune: bool = False,
    on_file: Callable[[FileResult], None] = lambda result: None,
    on_start: Callable[[int], None] = lambda total: None,
) -> IngestReport:
    """`deepsift.ingest.pipeline.ingest`, with loading, chunking and embedding on the Ray
    cluster at `settings.ray_address` ("local": a runtime started on this machine)."""
    ray = _ray()
    files, results, stored, created = start_ingest(paths, collection, store, embedder, description)
    on_start(len(files))
    for result in results:
        on_file(result)

    def done(result: FileResult) -> None:
        results.append(result)
        on_file(result)

    def written(parsed: ParsedFile, vectors: list[list[float]]) -> FileResult:
        """The file's chunks written as the local pipeline writes them, then marked complete."""
        first: StoredChunk | None = None
        for start in range(0, len(parsed.chunks), WRITE_BATCH):
            batch = parsed.chunks[start : start + WRITE_BATCH]
            rows = stored_chunks(parsed, batch, vectors[start : start + WRITE_BATCH])
            store.write_chunks(collection, rows)
            first = first or rows[0]
        return complete_file(parsed, first, collection, stored, store)

    changed = []
    for path in files:
        hashed = changed_hash(path, stored, settings)
        if isinstance(hashed, FileResult):
            done(hashed)
        else:
            changed.append({"path": str(path), "doc_hash": hashed})
    if changed:
        started = _connect(ray, settings.ray_address)
        try:
            for parsed, vectors in _embedded(ray, changed, settings):
                done(parsed if isinstance(parsed, FileResult) else written(parsed, vectors))
        finally:
            if started:
                ray.shutdown()
    if prune:
        results += prune_missing(collection, stored, store)
    return finish_ingest(collection, results, store, created)


def _embedded(ray: Any, changed: list[dict[str, str]], settings: Settings) -> Iterable[tuple]:
    """Each changed file's (ParsedFile or FileResult, vectors), as the workers finish them."""
    workers = settings.ray_workers or max(1, int(ray.cluster_resources().get("CPU", 1)) // 2)
    files = ray.data.from_items(changed, override_num_blocks=len(changed))
    embedded = files.map_batches(
        _embedding_actor(settings),
        batch_size=1,
        compute=ray.data.ActorPoolStrategy(size=workers),
        num_cpus=min(CPUS_PER_WORKER, ray.cluster_resources().get("CPU", 1) / workers),
    )
    for row in embedded.iter_rows():
        yield pickle.loads(row["file"])


def _ray() -> Any:
    try:
        import ray
        import ray.data
    except ImportError:
        raise UserError(
            "--ray needs Ray: pip install 'deepsift[ray]' (or pip install 'ray[data]')"
        ) from None
    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = False  # the ingest's own progress says files and chunks
    return ray


def _connect(ray: Any, address: str) -> bool:
    """Join the cluster at `address` ("auto": the one this machine belongs to), or start a
    runtime on this machine ("local"); whether this call started it."""
    if ray.is_initialized():
        return False
    local = address == "local"
    # Ray logs its runtime's start and each dataset's plan; the ingest's summary says what was done.
    for name in ("ray", "ray.data"):
        logging.getLogger(name).setLevel(logging.ERROR)
    for attempt in range(1, LOCAL_STARTS + 1):
        try:
            ray.init(
                address=None if local else address,
                include_dashboard=False,
                log_to_driver=False,
                logging_level=logging.ERROR,
            )
            break
        except Exception as e:
            # Ray gives a new runtime's processes 30 s each to come up (the GCS to write its
            # port, the raylet to register); on a busy 2-core machine one of them missed it now
            # and then (2 starts in some 27 here), which ended the ingest: a local runtime is
            # started again.
            if local and attempt < LOCAL_STARTS and "timed out" in str(e).lower():
                ray.shutdown()
                continue
            if not isinstance(e, (ConnectionError, RuntimeError, ValueError)):
                raise
            where = "start Ray on this machine" if local else f"join the Ray cluster at {address!r}"
            raise UserError(f"cannot {where}: {e}") from None
    return local
