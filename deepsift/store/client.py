"""Opening the configured Milvus: a Milvus Lite file another process holds is waited for, and a
store that cannot be opened is one line (StoreError) that says what to do."""

import fcntl
import logging
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


class StoreError(UserError):
    """A storage problem the user can act on; the message says what to do."""


def _locked(lite_db: Path) -> bool:
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
            return MilvusClient(uri=uri, token=settings.milvus_token)
        except Exception as e:  # pymilvus raises several types for one cause: cannot open
            if "://" in uri or not _locked(Path(uri)):
                raise StoreError(f"cannot open Milvus at {uri}: {e}") from None
        if time.monotonic() >= deadline:
            waited = f" (waited {settings.store_wait:g} s)" if settings.store_wait else ""
            raise StoreError(
                f"the Milvus Lite database {uri} is in use by another process{waited}; wait for "
                "it (--wait SECONDS, setting store_wait), or set DEEPSIFT_MILVUS_URI to a Milvus "
                "server"
            )
        if not waiting:
            logging.getLogger(__name__).warning(
                "the Milvus Lite database %s is in use by another process: waiting up to %g s",
                uri,
                settings.store_wait,
            )
            waiting = True
        time.sleep(_WAIT_STEP)
