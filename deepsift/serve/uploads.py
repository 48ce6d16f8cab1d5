"""Files uploaded through the web app: type-checked, size-limited, saved under the data dir with
names that cannot leave it."""

import re
import unicodedata
from pathlib import Path

from deepsift.errors import UserError
from deepsift.ingest.loaders import SUPPORTED
from deepsift.store import check_collection_name

UPLOADS = "uploads"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
MAX_NAME = 120


class UploadRefused(UserError):
    """An upload the server will not take; `status` is the HTTP status to answer with."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


def safe_name(name: str) -> str:
    """The last part of an uploaded file's name, in letters, digits and ._- only, never hidden
    and never empty ("../../etc/passwd" becomes "passwd", "..\\a b.md" becomes "a_b.md")."""
    base = unicodedata.normalize("NFKC", name).replace("\\", "/").rsplit("/", 1)[-1]
    stem, dot, suffix = base.rpartition(".")
    if not dot:
        stem, suffix = suffix, ""
    stem = _UNSAFE.sub("_", stem).strip("._-")[:MAX_NAME] or "upload"
    suffix = _UNSAFE.sub("", suffix).lower()
    return f"{stem}.{suffix}" if suffix else stem


def check_type(name: str) -> str:
    """The upload's safe name, when its type is one ingest reads; else UploadRefused."""
    safe = safe_name(name)
    suffix = Path(safe).suffix.lower()
    if suffix not in SUPPORTED:
        kinds = " ".join(sorted(SUPPORTED))
        raise UploadRefused(
            f"{name!r}: files of type {suffix or '(no extension)'} cannot be ingested; "
            f"upload one of {kinds}",
            415,
        )
    return safe


def upload_folder(data_dir: Path, collection: str) -> Path:
    """Where a collection's uploads are kept: DATA_DIR/uploads/COLLECTION."""
    folder = data_dir / UPLOADS / check_collection_name(collection)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def save(folder: Path, name: str, data: bytes) -> Path:
    """Write `data` as `name` (already safe) in `folder`, checking it stays inside."""
    path = (folder / name).resolve()
    if not path.is_relative_to(folder.resolve()):
        raise UploadRefused(f"{name!r} is not a plain file name")
    path.write_bytes(data)
    return path
