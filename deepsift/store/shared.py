"""A Milvus Lite file shared by several processes: `deepsift serve` serves its file through
Milvus Lite's own gRPC server on loopback and says so in a file beside it, so the commands run
from other terminals open the same collections through that server instead of being refused."""

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from deepsift.config import Settings
from deepsift.store.client import StoreError, holder_of, locked, server_file, serving

STARTUP_SECONDS = 60


@contextmanager
def shared_store(settings: Settings, holder: str) -> Iterator[Settings]:
    """`settings` pointing at a Milvus Lite server over their Lite file for as long as this
    lasts, which other deepsift processes find and use; `holder` says who runs it (shown to
    them). A Milvus server already configured is shared as it is."""
    uri = settings.resolved_milvus_uri
    if "://" in uri:
        yield settings
        return
    lite_db = Path(uri).resolve()
    lite_db.parent.mkdir(parents=True, exist_ok=True)
    if locked(lite_db):
        raise StoreError(
            f"the Milvus Lite database {lite_db} is in use by another process{_held_by(lite_db)}"
        )
    port = _free_port()
    said = tempfile.TemporaryFile()  # not a pipe: a long-lived server would fill one
    server = subprocess.Popen(
        [sys.executable, "-m", "milvus_lite", "server", "--data-dir", str(lite_db)]
        + ["--host", "127.0.0.1", "--port", str(port)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=said,
        preexec_fn=_die_with_parent if sys.platform == "linux" else None,
    )
    try:
        _wait_for(server, port, lite_db, said)
        shared = {"uri": f"http://127.0.0.1:{port}", "pid": server.pid}
        shared |= {"holder_pid": os.getpid(), "holder": holder}
        _write(server_file(lite_db), shared)
        try:
            yield settings.model_copy(update={"milvus_uri": shared["uri"]})
        finally:
            server_file(lite_db).unlink(missing_ok=True)
    finally:
        server.terminate()
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        said.close()


def _held_by(lite_db: Path) -> str:
    shared = serving(lite_db)
    if shared:
        return f" ({shared['holder']}, pid {shared['holder_pid']})"
    return holder_of(lite_db)


def _wait_for(server: subprocess.Popen, port: int, lite_db: Path, said: IO[bytes]) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                said.seek(0)
                lines = said.read().decode(errors="replace").strip().splitlines()
                why = lines[-1] if lines else f"exit status {server.poll()}"
                raise StoreError(
                    f"cannot share {lite_db} through milvus-lite server: {why}"
                ) from None
            time.sleep(0.2)


def _write(path: Path, data: dict) -> None:
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    temporary.write_text(json.dumps(data), encoding="utf-8")
    os.replace(temporary, path)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _die_with_parent() -> None:
    """In the server's process: end it when the process that started it ends, even killed."""
    import ctypes

    ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
