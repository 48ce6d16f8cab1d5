"""Opening the configured Milvus: a Milvus Lite file that `deepsift serve` shares is opened
through its server (store/shared.py), one another process holds is waited for, and a store that
cannot be opened is one line (StoreError) that names the holder and says what to do."""

import fcntl
import json
import logging
import os
import time
from pathlib import Path

from pymilvus import MilvusClient

from deepsift.config import Settings, make_folder
from deepsift.errors import UserError

# Milvus Lite does not implement the query iterator's timestamp call: its in-process gRPC server
# logs a traceback and pymilvus a warning on every listing, though the listing is complete.
logging.getLogger("grpc._server").setLevel(logging.CRITICAL)
# It also logs a traceback when it cannot open a database; StoreError says why in one line.
logging.getLogger("milvus_lite.server_manager").setLevel(logging.CRITICAL)
logging.getLogger("pymilvus.client.iterator.query_iterator").setLevel(logging.ERROR)

_WAIT_STEP = 0.5  # seconds between tries to open a Milvus Lite file another process holds
# pymilvus pings an idle connection every 10 s; a gRPC server's default policy (Milvus Lite's)
# allows one ping in 5 minutes, answers the third early one with "too many pings" and drops the
# connection, and the next client of that address then cannot connect. One ping in 5 minutes
# still finds a dead connection.
_CHANNEL = {"grpc.keepalive_time_ms": 300_000, "grpc.keepalive_permit_without_calls": 0}


class StoreError(UserError):
    """A storage problem the user can act on; the message says what to do."""


def locked(lite_db: Path) -> bool:
    """Whether another process holds Milvus Lite's lock on this database directory."""
    lock = lite_db / "LOCK"
    if not lock.exists():
        return False
    with lock.open("a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return True
        fcntl.flock(handle, fcntl.LOCK_UN)
    return False


def open_client(settings: Settings) -> MilvusClient:
    """A client for the configured Milvus; a Lite file another process holds is retried until
    `store_wait` seconds have passed."""
    uri = settings.resolved_milvus_uri
    if "://" not in uri:
        setting = "DEEPSIFT_MILVUS_URI" if settings.milvus_uri else "DEEPSIFT_DATA_DIR"
        make_folder(Path(uri).parent, setting)
    deadline = time.monotonic() + settings.store_wait
    waiting = False
    while True:
        try:
            return MilvusClient(uri=uri, token=settings.milvus_token, grpc_options=_CHANNEL)
        except Exception as e:  # pymilvus raises several types for one cause: cannot open
            if "://" in uri or not locked(Path(uri)):
                raise StoreError(f"cannot open Milvus at {uri}: {e}") from None
        shared = serving(Path(uri).resolve())
        if shared:
            try:
                return MilvusClient(uri=shared["uri"], grpc_options=_CHANNEL)
            except Exception:  # it stopped since: the file is waited for as any holder is
                pass
        if time.monotonic() >= deadline:
            waited = f" (waited {settings.store_wait:g} s)" if settings.store_wait else ""
            raise StoreError(
                f"the Milvus Lite database {uri} is in use by another process{holder_of(Path(uri))}"
                f"{waited}; wait for it (--wait SECONDS, setting store_wait), or run both on a "
                "Milvus server: deepsift serve shares the file with the other commands while it "
                "runs, or set DEEPSIFT_MILVUS_URI (see docs/scaling.md)"
            )
        if not waiting:
            logging.getLogger(__name__).warning(
                "the Milvus Lite database %s is in use by another process: waiting up to %g s",
                uri,
                settings.store_wait,
            )
            waiting = True
        time.sleep(_WAIT_STEP)


def server_file(lite_db: Path) -> Path:
    """Where the process sharing `lite_db` through a server says how to reach it."""
    return lite_db.with_name(f"{lite_db.name}.server.json")


def serving(lite_db: Path) -> dict | None:
    """The server sharing `lite_db` ({uri, pid, holder_pid, holder}) while it runs; else None."""
    try:
        shared = json.loads(server_file(lite_db).read_text(encoding="utf-8"))
        os.kill(shared["pid"], 0)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return shared


def holder_of(lite_db: Path) -> str:
    """The process that holds `lite_db`'s lock, as ' (pid N: its command line)', where the
    system says (Linux: /proc/locks); '' elsewhere."""
    try:
        inode = (lite_db / "LOCK").stat().st_ino
        for line in Path("/proc/locks").read_text().splitlines():
            fields = line.split()
            if len(fields) > 5 and fields[5].endswith(f":{inode}"):
                pid = fields[4]
                command = Path(f"/proc/{pid}/cmdline").read_bytes()
                words = command.decode(errors="replace").replace("\0", " ").split()
                return f" (pid {pid}: {' '.join(words)[:120]})"
    except OSError:
        pass
    return ""
