"""Milvus collections: schema, document bookkeeping, hybrid (dense + BM25) search.

One collection per source set. The collection's properties record its description (the routing
signal) and the embedding model and dimension its vectors were made with.
"""

import fcntl
import hashlib
import logging
import os
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel

os.environ.setdefault("GRPC_VERBOSITY", "NONE")  # Milvus Lite's keepalive chatter is not an error

from pymilvus import (  # noqa: E402
    AnnSearchRequest,
    DataType,
    Function,
    FunctionType,
    MilvusClient,
    RRFRanker,
)

from deepsift.config import Settings, make_folder
from deepsift.errors import UserError
from deepsift.llm.embedders import Embedder
from deepsift.records import Chunk

# Milvus Lite does not implement the query iterator's timestamp call: its in-process gRPC server
# logs a traceback and pymilvus a warning on every listing, though the listing is complete.
logging.getLogger("grpc._server").setLevel(logging.CRITICAL)
# It also logs a traceback when it cannot open a database; StoreError says why in one line.
logging.getLogger("milvus_lite.server_manager").setLevel(logging.CRITICAL)
logging.getLogger("pymilvus.client.iterator.query_iterator").setLevel(logging.ERROR)

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,254}$")
_OUTPUT = ["text", "source", "title", "position"]
_READ = [*_OUTPUT, "metadata"]  # a chunk's metadata holds its document's facts
MAX_TEXT_BYTES = 65_535
MAX_TITLE_BYTES = 1024
# The doc_hash of a document's first chunk while its chunks are being replaced: the document's
# own hash is written last, so an interrupted replacement reads as changed and is redone.
PENDING = ""
# A Milvus string literal knows only these escapes (not json's \uXXXX); all else stands as itself.
_LITERAL_ESCAPES = str.maketrans({"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r"})
_WAIT_STEP = 0.5  # seconds between tries to open a Milvus Lite file another process holds
# A collection's copy being re-embedded (`reembed`); hidden from the listing, and once complete
# (its property "deepsift.rebuilds" names the original) it replaces the original.
_REBUILD_PREFIX = "_rebuild_"
_REBUILD_BATCH = 256
# A Milvus server returns at most 16,384 rows a query and takes a bounded message: listings
# page through a query iterator, and deletes name this many ids at a time.
_PAGE = 1000


class StoreError(UserError):
    """A storage problem the user can act on; the message says what to do."""


@dataclass
class StoredChunk:
    """One chunk as written to a collection: its text, vector and where it came from."""

    id: str
    text: str
    vector: list[float]
    source: str
    title: str
    position: int
    doc_hash: str
    metadata: dict[str, Any] = field(default_factory=dict)

    def row(self) -> dict[str, Any]:
        """The Milvus row, text and title cut to what their fields hold (limits in bytes)."""
        return {
            "id": self.id,
            "text": _fit(self.text, MAX_TEXT_BYTES),
            "dense": self.vector,
            "source": self.source,
            "title": _fit(self.title, MAX_TITLE_BYTES),
            "position": self.position,
            "doc_hash": self.doc_hash,
            "metadata": self.metadata,
        }


class CollectionInfo(BaseModel):
    name: str
    description: str
    documents: int
    chunks: int
    embedding_model: str


def check_collection_name(name: str) -> str:
    if name == "web":
        raise StoreError("collection name 'web' is taken by the web source: choose another")
    if not _NAME.match(name) or name.startswith(_REBUILD_PREFIX):
        raise StoreError(
            f"collection name {name!r} is invalid: "
            f"use letters, digits and _, not starting with a digit or {_REBUILD_PREFIX}"
        )
    return name


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


def _open(settings: Settings) -> MilvusClient:
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


def _fit(text: str, max_bytes: int) -> str:
    encoded = text.encode()
    return text if len(encoded) <= max_bytes else encoded[:max_bytes].decode(errors="ignore")


# Rows read per document counted by `mentioning`: a long document mentions a name many times.
_MENTION_ROWS = 20


def _quoted(value: str) -> str:
    return f'"{value.translate(_LITERAL_ESCAPES)}"'


class Store:
    def __init__(self, settings: Settings) -> None:
        self._client = _open(settings)
        self._loaded: set[str] = set()
        self._finish_rebuilds()

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def names(self) -> list[str]:
        names = self._client.list_collections()
        return sorted(name for name in names if not name.startswith(_REBUILD_PREFIX))

    def exists(self, name: str) -> bool:
        return self._client.has_collection(name)

    def _properties(self, name: str) -> dict[str, str]:
        return self._client.describe_collection(name).get("properties", {})

    def description(self, name: str) -> str:
        return self._properties(name).get("deepsift.description", "")

    def embedding_model(self, name: str) -> str:
        return self._properties(name).get("deepsift.embedding_model", "")

    def ensure(self, name: str, description: str | None, embedder: Embedder) -> None:
        """Create the collection, or check that it was built with this embedder."""
        check_collection_name(name)
        if self.exists(name):
            self.check_embedder(name, embedder)
            if description is not None and description != self.description(name):
                self._client.alter_collection_properties(
                    name, properties={"deepsift.description": description}
                )
            return
        self._create(name, description or "", embedder)

    def _create(self, name: str, description: str, embedder: Embedder) -> None:
        schema = MilvusClient.create_schema(auto_id=False, enable_dynamic_field=False)
        schema.add_field("id", DataType.VARCHAR, is_primary=True, max_length=64)
        schema.add_field("text", DataType.VARCHAR, max_length=MAX_TEXT_BYTES, enable_analyzer=True)
        schema.add_field("dense", DataType.FLOAT_VECTOR, dim=embedder.dim)
        schema.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
        schema.add_field("source", DataType.VARCHAR, max_length=4096)
        schema.add_field("title", DataType.VARCHAR, max_length=MAX_TITLE_BYTES)
        schema.add_field("position", DataType.INT64)
        schema.add_field("doc_hash", DataType.VARCHAR, max_length=64)
        schema.add_field("metadata", DataType.JSON)
        schema.add_function(
            Function(
                name="text_bm25",
                function_type=FunctionType.BM25,
                input_field_names=["text"],
                output_field_names=["sparse"],
            )
        )
        index = self._client.prepare_index_params()
        index.add_index("dense", index_type="AUTOINDEX", metric_type="COSINE")
        index.add_index("sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25")
        self._client.create_collection(
            name,
            schema=schema,
            index_params=index,
            properties={
                "deepsift.description": description,
                "deepsift.embedding_model": embedder.name,
                "deepsift.dim": str(embedder.dim),
            },
        )
        self._loaded.add(name)

    def check_embedder(self, name: str, embedder: Embedder) -> None:
        properties = self._properties(name)
        model = properties.get("deepsift.embedding_model", "")
        dim = properties.get("deepsift.dim", "")
        if (model, dim) != (embedder.name, str(embedder.dim)):
            raise StoreError(
                f"collection {name!r} was built with embedding model {model} ({dim}-d) but the "
                f"configured embedder is {embedder.name} ({embedder.dim}-d): configure {model}, "
                f"or rebuild it with this one: deepsift collections reembed {name}"
            )

    def _load(self, name: str) -> None:
        if name not in self._loaded:
            if not self.exists(name):
                raise StoreError(f"no collection named {name!r}: see `deepsift collections`")
            self._client.load_collection(name)
            self._loaded.add(name)

    def documents(self, name: str) -> dict[str, str]:
        """Every stored document of a collection: source -> hash of the file it came from."""
        found: dict[str, str] = {}
        for row in self._rows(name, "position == 0", ["source", "doc_hash"]):
            # Two hashes for one source, or PENDING: an interrupted replacement, redone.
            known = found.setdefault(row["source"], row["doc_hash"])
            if known != row["doc_hash"]:
                found[row["source"]] = PENDING
        return found

    def _rows(self, name: str, where: str, fields: list[str]) -> Iterator[dict[str, Any]]:
        """Every row the filter `where` matches, a page at a time (no server cap on how many)."""
        self._load(name)
        pages = self._client.query_iterator(
            name, batch_size=_PAGE, filter=where, output_fields=fields
        )
        try:
            while page := pages.next():
                yield from page
        finally:
            pages.close()

    def _delete(self, name: str, ids: set[str]) -> None:
        ordered = sorted(ids)
        for start in range(0, len(ordered), _PAGE):
            self._client.delete(name, ids=ordered[start : start + _PAGE])

    def sources_containing(self, name: str, digits: str) -> list[str]:
        """The stored documents whose path holds `digits` (candidates; the caller checks how)."""
        if not digits.isdigit():
            raise ValueError(f"not digits: {digits!r}")
        rows = self._rows(name, f'position == 0 and source like "%{digits}%"', ["source"])
        return sorted({row["source"] for row in rows})

    def mentioning(self, name: str, phrase: str, most: int) -> int:
        """How many stored documents mention `phrase` (case as written), counted up to `most`:
        a name few documents mention is specific."""
        self._load(name)
        pattern = phrase.replace("%", "").replace("_", "")
        rows = self._client.query(
            name,
            filter=f"text like {_quoted('%' + pattern + '%')}",
            output_fields=["source"],
            limit=most * _MENTION_ROWS,
        )
        return min(len({row["source"] for row in rows}), most)

    def opening(self, name: str, source: str, chunks: int) -> list[Chunk]:
        """The first `chunks` chunks of a stored document, in order: where it says what it is
        about (its summary, abstract or purpose)."""
        self._load(name)
        rows = self._client.query(
            name,
            filter=f"source == {_quoted(source)} and position < {int(chunks)}",
            output_fields=["id", *_READ],
        )
        return [
            Chunk(
                collection=name,
                facts=_facts(row),
                **{field: row[field] for field in ["id", *_OUTPUT]},
            )
            for row in sorted(rows, key=lambda row: row["position"])
        ]

    def count(self, name: str) -> int:
        self._load(name)
        return self._client.query(name, filter="", output_fields=["count(*)"])[0]["count(*)"]

    def info(self, name: str) -> CollectionInfo:
        return CollectionInfo(
            name=name,
            description=self.description(name),
            documents=len(self.documents(name)),
            chunks=self.count(name),
            embedding_model=self.embedding_model(name),
        )

    def _ids_of(self, name: str, source: str) -> set[str]:
        return {row["id"] for row in self._rows(name, f"source == {_quoted(source)}", ["id"])}

    def add_chunks(self, name: str, chunks: list[StoredChunk]) -> None:
        """Upsert chunks (an id already stored is overwritten)."""
        self._load(name)
        self._client.upsert(name, [chunk.row() for chunk in chunks])

    def write_chunks(self, name: str, chunks: list[StoredChunk]) -> None:
        """Upsert some of a document's new chunks, its first one marked PENDING until
        `complete_document`: a crash before then leaves the document to be written again."""
        self.add_chunks(
            name, [replace(c, doc_hash=PENDING) if c.position == 0 else c for c in chunks]
        )

    def complete_document(
        self, name: str, source: str, ids: set[str], first: StoredChunk | None
    ) -> None:
        """After all of a document's new chunks are written: delete its chunks not in `ids` (the
        old ones), then write its first chunk with the document's hash, the mark of completion."""
        self._load(name)
        stale = self._ids_of(name, source) - ids
        self._delete(name, stale)
        if first:
            self.add_chunks(name, [first])

    def flush(self, name: str) -> None:
        """Seal what was written; searching unflushed data is many times slower."""
        self._client.flush(name)

    def delete_document(self, name: str, source: str) -> int:
        self._load(name)
        ids = self._ids_of(name, source)
        self._delete(name, ids)
        return len(ids)

    def drop(self, name: str) -> None:
        if not self.exists(name):
            raise StoreError(f"no collection named {name!r}: see `deepsift collections`")
        self._client.drop_collection(name)
        self._loaded.discard(name)

    def reembed(
        self,
        name: str,
        embedder: Embedder,
        on_progress: Callable[[int, int], None] = lambda done, total: None,
    ) -> int:
        """Rebuild a collection's vectors with `embedder`; returns the chunks re-embedded.

        A copy is built beside the collection and replaces it only when complete, so an
        interrupted rebuild leaves the collection as it was (the copy is redone next time)."""
        self._load(name)
        copy = _REBUILD_PREFIX + hashlib.sha256(name.encode()).hexdigest()[:16]
        if self.exists(copy):
            self._client.drop_collection(copy)
        self._create(copy, self.description(name), embedder)
        total, done = self.count(name), 0
        fields = ["id", "text", "source", "title", "position", "doc_hash", "metadata"]
        rows = self._client.query_iterator(
            name, batch_size=_REBUILD_BATCH, filter="", output_fields=fields
        )
        while batch := rows.next():
            vectors = embedder.embed([row["text"] for row in batch])
            rebuilt = [{**row, "dense": v} for row, v in zip(batch, vectors, strict=True)]
            self._client.insert(copy, rebuilt)
            done += len(batch)
            on_progress(done, total)
        rows.close()
        self.flush(copy)
        self._client.alter_collection_properties(copy, properties={"deepsift.rebuilds": name})
        self._replace(copy, name)
        return done

    def _replace(self, copy: str, name: str) -> None:
        """The complete copy takes the original's name; re-run on open if a crash came between."""
        if self.exists(name):
            self._client.drop_collection(name)
        self._client.rename_collection(copy, name)
        self._loaded -= {copy, name}

    def _finish_rebuilds(self) -> None:
        for copy in self._client.list_collections():
            if copy.startswith(_REBUILD_PREFIX):
                name = self._properties(copy).get("deepsift.rebuilds")
                if name and not self.exists(name):
                    self._replace(copy, name)

    def search(
        self,
        name: str,
        query: str,
        vector: list[float],
        k: int,
        sources: list[str] | None = None,
        ids: list[str] | None = None,
    ) -> list[Chunk]:
        """Hybrid search: dense cosine and BM25 candidates fused by reciprocal rank (k=60);
        within the documents `sources`, and among the chunks `ids`, when given."""
        self._load(name)
        bounds = [
            f"{field} in [{', '.join(map(_quoted, values))}]"
            for field, values in (("source", sources), ("id", ids))
            if values
        ]
        within = " and ".join(bounds)
        requests = [
            AnnSearchRequest(data=[vector], anns_field="dense", param={}, limit=k * 2, expr=within),
            AnnSearchRequest(data=[query], anns_field="sparse", param={}, limit=k * 2, expr=within),
        ]
        hits = self._client.hybrid_search(
            name, requests, RRFRanker(60), limit=k, output_fields=_READ
        )[0]
        return [
            Chunk(
                id=hit["id"],
                collection=name,
                score=hit["distance"],
                query=query,
                facts=_facts(hit["entity"]),
                **{field: hit["entity"][field] for field in _OUTPUT},
            )
            for hit in hits
        ]


def _facts(row: dict[str, Any]) -> dict[str, Any]:
    """The document facts stored with a chunk ({} in a collection ingested before them)."""
    facts = (row.get("metadata") or {}).get("facts")
    return facts if isinstance(facts, dict) else {}
