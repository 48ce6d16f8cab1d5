"""Split a loaded document into overlapping chunks that carry their section headings as context."""

import re
from dataclasses import dataclass

from deepsift.ingest.loaders import LoadedDocument

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


@dataclass
class TextChunk:
    text: str  # the context line ("Title > Heading > Sub") followed by the passage
    heading: str
    position: int


def chunk_document(document: LoadedDocument, max_chars: int, overlap: int) -> list[TextChunk]:
    """Sections are chunked separately; within one, paragraphs fill chunks up to max_chars and
    each new chunk repeats the last `overlap` characters of the previous one."""
    chunks: list[TextChunk] = []
    headings: list[tuple[int, str]] = []
    body: list[str] = []

    def context() -> str:
        return " > ".join(text for _, text in headings)

    def emit() -> None:
        if body:
            heading = context()
            header = " > ".join(filter(None, [document.title, heading]))
            if heading.startswith(document.title):
                header = heading
            chunks.append(TextChunk(f"{header}\n\n" + "\n\n".join(body), heading, len(chunks)))
            body.clear()

    for block in document.blocks:
        if block.heading_depth is not None:
            emit()
            headings[:] = [h for h in headings if h[0] < block.heading_depth]
            headings.append((block.heading_depth, block.text))
            continue
        for piece in _split_long(block.text, max_chars, overlap):
            if body and sum(len(p) + 2 for p in body) + len(piece) > max_chars:
                tail = _tail("\n\n".join(body), overlap)
                emit()
                if tail:
                    body.append(tail)
            body.append(piece)
    emit()
    return chunks


def _split_long(text: str, max_chars: int, overlap: int) -> list[str]:
    """A paragraph longer than max_chars becomes overlapping windows cut at sentence ends."""
    if len(text) <= max_chars:
        return [text]
    pieces: list[str] = []
    current = ""
    for sentence in _SENTENCE_END.split(text):
        while len(sentence) > max_chars:  # one enormous "sentence": cut at spaces
            cut = sentence.rfind(" ", 0, max_chars)
            cut = cut if cut > 0 else max_chars
            pieces.append(sentence[:cut])
            sentence = sentence[cut:].lstrip()
        if current and len(current) + 1 + len(sentence) > max_chars:
            pieces.append(current)
            current = _tail(current, overlap)
        current = f"{current} {sentence}".strip()
    if current:
        pieces.append(current)
    return pieces


def _tail(text: str, overlap: int) -> str:
    """The last `overlap` characters of text, starting at a word boundary."""
    if overlap <= 0:
        return ""
    if len(text) <= overlap:
        return text
    tail = text[-overlap:]
    space = tail.find(" ")
    return tail[space + 1 :] if space >= 0 else tail
