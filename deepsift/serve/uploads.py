"""Files uploaded through the web app: type-checked, size-limited, saved under the data dir with
their relative paths (a folder's README.md and its sub-folder's stay two documents), made of
names that cannot leave it; a file never silently replaces another."""

import re
import unicodedata
from pathlib import Path, PurePosixPath

from deepsift.errors import UserError
from deepsift.ingest.loaders import SUPPORTED
from deepsift.store import check_collection_name

UPLOADS = "uploads"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
MAX_NAME = 120
MAX_DEPTH = 8  # folders kept of an uploaded path: its last ones


class UploadRefused(UserError):
    """An upload the server will not take; `status` is the HTTP status to answer with."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


def safe_path(name: str) -> str:
    """An uploaded file's relative path (as a browser sends a folder's files), each part in
    letters, digits and ._- only, never hidden, never empty, never up or absolute
    ("../../etc/passwd.md" becomes "etc/passwd.md", "..\\a b.md" becomes "a_b.md")."""
    parts = unicodedata.normalize("NFKC", name).replace("\\", "/").split("/")
    folders = [_UNSAFE.sub("_", part).strip("._-")[:MAX_NAME] for part in parts[:-1]]
    kept = [folder for folder in folders if folder][-MAX_DEPTH:]
    return "/".join([*kept, safe_name(parts[-1])])


def safe_name(name: str) -> str:
    """A file name in letters, digits and ._- only, never hidden and never empty."""
    stem, dot, suffix = name.rpartition(".")
    if not dot:
        stem, suffix = suffix, ""
    stem = _UNSAFE.sub("_", stem).strip("._-")[:MAX_NAME] or "upload"
    suffix = _UNSAFE.sub("", suffix).lower()
    return f"{stem}.{suffix}" if suffix else stem


def check_type(name: str) -> str:
    """The upload's safe path, when its type is one ingest reads; else UploadRefused."""
    safe = safe_path(name)
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


def check_clashes(folder: Path, files: list[tuple[str, bytes]], replace: bool) -> None:
    """UploadRefused (409), before anything is written, when two files of the upload would be
    saved as one, when a file and a folder would share a name (in the upload, or with what was
    uploaded before), or when a file would replace a different one uploaded before (unless
    `replace`)."""
    seen: set[str] = set()
    folders = {str(p) for name, _ in files for p in PurePosixPath(name).parents if str(p) != "."}
    for name, data in files:
        if name in seen:
            raise UploadRefused(
                f"two files of this upload would both be saved as {name!r}: upload their folder "
                "(the page keeps relative paths) or rename one",
                409,
            )
        seen.add(name)
        if name in folders:
            raise UploadRefused(
                f"this upload holds a file {name!r} and a folder of that name: rename one", 409
            )
        kept = folder / name
        if kept.is_dir():
            raise UploadRefused(
                f"{name!r} is a folder of earlier uploads in this collection: rename the file",
                409,
            )
        inside = [str(p) for p in PurePosixPath(name).parents if (folder / p).is_file()]
        if inside:
            raise UploadRefused(
                f"{inside[0]!r} is a file uploaded before, so {name!r} cannot be saved inside "
                "it: rename the folder",
                409,
            )
        if not replace and kept.is_file() and kept.read_bytes() != data:
            raise UploadRefused(
                f"{name!r} is already in this collection with other content: rename the new "
                "one, or upload again with replace on to replace it",
                409,
            )


def save(folder: Path, name: str, data: bytes) -> Path:
    """Write `data` as `name` (already safe) in `folder`, checking it stays inside."""
    path = (folder / name).resolve()
    if not path.is_relative_to(folder.resolve()):
        raise UploadRefused(f"{name!r} is not a plain file path")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path
