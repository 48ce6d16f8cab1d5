"""A document's sentence made the report's: its document named where it says "this proposal", and
its own voice ("we") quoted and attributed to it."""

import re

from deepsift.records import Chunk
from deepsift.report.checks.defects import DEICTIC, defects
from deepsift.report.evidence.documents import name_of
from deepsift.text.markup import plain

QUOTES_VOICE = " says: “"  # how a sentence in its document's voice is given, quoted


def named_in(sentence: str, chunk: Chunk) -> str:
    """The sentence without markup, its document named where it says "this RFC"."""
    name = name_of(chunk)
    # Outside quotations only: a quotation keeps its document's words.
    pieces = re.split(r"(“[^”]*”)", plain(sentence))
    return "".join(
        p if p.startswith("“") else DEICTIC.sub(lambda m: _named(m, name), p) for p in pieces
    )


def as_reported(sentence: str, chunk: Chunk) -> str:
    """A document's sentence as the report's: its document named where it says "this RFC",
    and, where it speaks as "we", quoted and attributed to it."""
    text = named_in(sentence, chunk)
    name = name_of(chunk)
    if "voice" in defects(text):  # quoted as written: its "this RFC" too
        inner = plain(sentence).strip("\"“”'‘’ ").rstrip(".")
        inner = inner.replace("“", "‘").replace("”", "’").replace('"', "’")
        text = f"{name}{QUOTES_VOICE}{inner}”."
    return text


def _named(match: re.Match, name: str) -> str:
    """'this RFC' -> 'RFC 3085'; 'this proposal' of a document with no identifier -> 'the
    proposal “Its title”'."""
    if match[2] in ("section", "page", "chapter"):  # a part of the document: no name fits
        return match[0]
    if not name.startswith("“"):
        return name
    the = "The" if match[1] == "T" else "the"
    return f"{the} {match[2]} {name}"
