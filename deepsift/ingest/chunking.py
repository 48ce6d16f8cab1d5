"""Split a loaded document into overlapping chunks that carry their section headings as context."""

from dataclasses import dataclass

from deepsift.ingest.document import LoadedDocument
from deepsift.text.sentences import split_sentences


@dataclass
class TextChunk:
    # The context line ("Title > Heading > Sub"), in the first chunk the document's header lines
    # under it, then a blank line and the passage.
    text: str
    heading: str
    position: int


def chunk_document(document: LoadedDocument, max_chars: int, overlap: int) -> list[TextChunk]:
    """Sections are chunked separately; within one, paragraphs fill chunks up to max_chars and
    each new chunk repeats the last `overlap` characters of the previous one (fewer when the
    chunk has no room for them): no passage is longer than max_chars."""
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
            if not chunks and document.header:
                header = "\n".join([header, *document.header])
            chunks.append(TextChunk(f"{header}\n\n" + "\n\n".join(body), heading, len(chunks)))
            body.clear()

    for block in document.blocks:
        if block.heading_depth is not None:
            emit()
            headings[:] = [h for h in headings if h[0] < block.heading_depth]
            headings.append((block.heading_depth, block.text))
            continue
        for window, piece in enumerate(_split_long(block.text, max_chars, overlap)):
            if body and sum(len(p) + 2 for p in body) + len(piece) > max_chars:
                # A long paragraph's later windows repeat the one before already; the overlap
                # shrinks when the next piece leaves less room in the chunk.
                room = min(overlap, max_chars - len(piece) - 2)
                tail = _tail("\n\n".join(body), room) if window == 0 else ""
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
    for unit in (u for s in split_sentences(text) for u in _cut(s, max_chars)):
        if current and len(current) + 1 + len(unit) > max_chars:
            pieces.append(current)
            current = _tail(current, min(overlap, max_chars - len(unit) - 1))
        current = f"{current} {unit}".strip()
    if current:
        pieces.append(current)
    return pieces


def _cut(sentence: str, max_chars: int) -> list[str]:
    """One enormous "sentence" cut at spaces (inside a word longer than max_chars)."""
    parts = []
    while len(sentence) > max_chars:
        cut = sentence.rfind(" ", 0, max_chars)
        cut = cut if cut > 0 else max_chars
        parts.append(sentence[:cut])
        sentence = sentence[cut:].lstrip()
    return [*parts, sentence] if sentence else parts


def _tail(text: str, overlap: int) -> str:
    """The last `overlap` characters of text, starting at a word boundary."""
    if overlap <= 0:
        return ""
    if len(text) <= overlap:
        return text
    tail = text[-overlap:]
    space = tail.find(" ")
    return tail[space + 1 :] if space >= 0 else tail
