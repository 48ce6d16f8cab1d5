"""Milvus collections: schema, document bookkeeping, hybrid (dense + BM25) search.

One collection per source set. The collection's properties record its description (the routing
signal) and the embedding model and dimension its vectors were made with. client.py opens the
store, shared.py shares a Milvus Lite file through its server (deepsift serve), schema.py says
what a collection holds; Store, here, reads and writes it.

Imports deepsift.config, deepsift.errors, deepsift.llm and deepsift.records.
"""

import hashlib
import os
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

os.environ.setdefault("GRPC_VERBOSITY", "NONE")  # Milvus Lite's keepalive chatter is not an error

from pymilvus import AnnSearchRequest, RRFRanker  # noqa: E402

from deepsift.config import Settings  # noqa: E402
from deepsift.llm.embedders import Embedder  # noqa: E402
from deepsift.records import Chunk  # noqa: E402
from deepsift.store.client import StoreError, open_client  # noqa: E402
from deepsift.store.schema import (  # noqa: E402
    MAX_TEXT_BYTES,
    MAX_TITLE_BYTES,
    OUTPUT,
    PENDING,
    READ,
    REBUILD_PREFIX,
    CollectionInfo,
    StoredChunk,
    check_collection_name,
    collection_schema,
    facts_of,
    quoted,
)

__all__ = [
    "MAX_TEXT_BYTES",
    "MAX_TITLE_BYTES",
    "PENDING",
    "CollectionInfo",
    "Store",
    "StoreError",
    "StoredChunk",
    "check_collection_name",
]

_REBUILD_BATCH = 256
# A Milvus server returns at most 16,384 rows a query and takes a bounded message: listings
# page through a query iterator, and deletes name this many ids at a time.
_PAGE = 1000
# Rows read per document counted by `mentioning`: a long document mentions a name many times.
_MENTION_ROWS = 20


class Store:
    def __init__(self, settings: Settings) -> None:
        self._client = open_client(settings)
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
        return sorted(name for name in names if not name.startswith(REBUILD_PREFIX))

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
        schema = collection_schema(embedder.dim)
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
            filter=f"text like {quoted('%' + pattern + '%')}",
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
            filter=f"source == {quoted(source)} and position < {int(chunks)}",
            output_fields=["id", *READ],
        )
        return [
            Chunk(
                collection=name,
                facts=facts_of(row),
                **{field: row[field] for field in ["id", *OUTPUT]},
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
        return {row["id"] for row in self._rows(name, f"source == {quoted(source)}", ["id"])}

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
        copy = REBUILD_PREFIX + hashlib.sha256(name.encode()).hexdigest()[:16]
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
            if copy.startswith(REBUILD_PREFIX):
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
            f"{field} in [{', '.join(map(quoted, values))}]"
            for field, values in (("source", sources), ("id", ids))
            if values
        ]
        within = " and ".join(bounds)
        requests = [
            AnnSearchRequest(data=[vector], anns_field="dense", param={}, limit=k * 2, expr=within),
            AnnSearchRequest(data=[query], anns_field="sparse", param={}, limit=k * 2, expr=within),
        ]
        hits = self._client.hybrid_search(
            name, requests, RRFRanker(60), limit=k, output_fields=READ
        )[0]
        return [
            Chunk(
                id=hit["id"],
                collection=name,
                score=hit["distance"],
                query=query,
                facts=facts_of(hit["entity"]),
                **{field: hit["entity"][field] for field in OUTPUT},
            )
            for hit in hits
        ]
