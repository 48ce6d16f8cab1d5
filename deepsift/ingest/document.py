"""What a loader makes of a file: a title and blocks (headings and paragraphs)."""

from dataclasses import dataclass, field
from pathlib import Path


class LoadError(ValueError):
    """This file cannot be ingested; the message says why."""


@dataclass
class Block:
    text: str
    heading_depth: int | None = None  # None for body text, 0 for a top-level heading


@dataclass
class LoadedDocument:
    title: str
    blocks: list[Block]
    facts: dict[str, object] = field(default_factory=dict)  # deepsift.ingest.facts
    # Its front matter as `key: value` lines: searched with its first chunk, above that chunk's
    # passage like its context line, so never quoted as its text.
    header: list[str] = field(default_factory=list)


def titled(path: Path, blocks: list[Block]) -> LoadedDocument:
    """A document that opens with a heading is titled by it; one that opens otherwise (a header
    of metadata, body text) is known by its file name: its first heading heads a section
    ("Summary", as in every RFC) and would title all of them alike."""
    opens = blocks[0] if blocks else None
    title = opens.text if opens and opens.heading_depth is not None else path.stem
    return LoadedDocument(title=title, blocks=blocks)
