"""What a collection holds: valid names, the fields and their limits, a chunk as a row, and the
Milvus filter literal."""

import re
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel
from pymilvus import CollectionSchema, DataType, Function, FunctionType, MilvusClient

from deepsift.store.client import StoreError

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,254}$")
OUTPUT = ["text", "source", "title", "position"]
READ = [*OUTPUT, "metadata"]  # a chunk's metadata holds its document's facts
MAX_TEXT_BYTES = 65_535
MAX_TITLE_BYTES = 1024
# The doc_hash of a document's first chunk while its chunks are being replaced: the document's
# own hash is written last, so an interrupted replacement reads as changed and is redone.
PENDING = ""
# A Milvus string literal knows only these escapes (not json's \uXXXX); all else stands as itself.
_LITERAL_ESCAPES = str.maketrans({"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r"})
# A collection's copy being re-embedded (`reembed`); hidden from the listing, and once complete
# (its property "deepsift.rebuilds" names the original) it replaces the original.
REBUILD_PREFIX = "_rebuild_"


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
            "text": fit(self.text, MAX_TEXT_BYTES),
            "dense": self.vector,
            "source": self.source,
            "title": fit(self.title, MAX_TITLE_BYTES),
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
    if not _NAME.match(name) or name.startswith(REBUILD_PREFIX):
        raise StoreError(
            f"collection name {name!r} is invalid: "
            f"use letters, digits and _, not starting with a digit or {REBUILD_PREFIX}"
            + (f"; e.g. {spelled}" if (spelled := valid_spelling(name)) else "")
        )
    return name


def valid_spelling(name: str) -> str:
    """`name` as a collection may be called ("my frogs", "my-frogs": "my_frogs"); "" when
    nothing of it is left."""
    spelled = re.sub(r"[^A-Za-z0-9_]+", "_", name).strip("_")[:200]
    if spelled[:1].isdigit():
        spelled = f"docs_{spelled}"
    return spelled if _NAME.match(spelled) and spelled != "web" else ""


def collection_schema(dim: int) -> CollectionSchema:
    """The fields of a collection whose vectors have `dim` dimensions, BM25 fed by its text."""
    schema = MilvusClient.create_schema(auto_id=False, enable_dynamic_field=False)
    schema.add_field("id", DataType.VARCHAR, is_primary=True, max_length=64)
    schema.add_field("text", DataType.VARCHAR, max_length=MAX_TEXT_BYTES, enable_analyzer=True)
    schema.add_field("dense", DataType.FLOAT_VECTOR, dim=dim)
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
    return schema


def fit(text: str, max_bytes: int) -> str:
    encoded = text.encode()
    return text if len(encoded) <= max_bytes else encoded[:max_bytes].decode(errors="ignore")


def quoted(value: str) -> str:
    return f'"{value.translate(_LITERAL_ESCAPES)}"'


def facts_of(row: dict[str, Any]) -> dict[str, Any]:
    """The document facts stored with a chunk ({} in a collection ingested before them)."""
    facts = (row.get("metadata") or {}).get("facts")
    return facts if isinstance(facts, dict) else {}
