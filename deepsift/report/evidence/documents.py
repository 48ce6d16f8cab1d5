"""How a report names a document, from the document's own facts (deepsift.ingest.facts), and
what a sentence that cites one of its chunks may rest on."""

from deepsift.ingest.facts import facts_text
from deepsift.records import Chunk
from deepsift.text.markup import plain


def name_of(chunk: Chunk) -> str:
    """How a report names a chunk's document: its own identifier ("RFC 3085"), else its title
    in quotation marks."""
    identifier = str(chunk.facts.get("id", "")).strip()
    return identifier or f"“{plain(str(chunk.facts.get('title') or chunk.title))}”"


def label_of(chunk: Chunk) -> str:
    """A document's identifier and title together, where it has both ("EIP-4844 (Shard Blob
    Transactions)"); else whichever it has."""
    identifier = str(chunk.facts.get("id", "")).strip()
    title = plain(str(chunk.facts.get("title") or chunk.title))  # no footnote marks or links
    if identifier and title and identifier.casefold() not in title.casefold():
        return f"{identifier} ({title})"
    return identifier or title


def evidence_of(chunk: Chunk) -> str:
    """What a sentence citing the chunk may rest on: its text and its document's facts."""
    facts = facts_text(chunk.facts)
    return f"{chunk.text}\n{facts}" if facts else chunk.text
