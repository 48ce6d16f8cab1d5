"""How retrieved text is shown to the model: labelled with where it came from, and quoted
between tags it cannot close, so that instructions inside a document or a web page stay data."""

from deepsift.records import Chunk
from deepsift.report.evidence.documents import label_of
from deepsift.text.locations import display_path
from deepsift.text.untrusted import as_data, one_line


def quoted(text: str) -> str:
    return f"<excerpt>\n{as_data(text).strip()}\n</excerpt>"


def numbered(chunks: list[Chunk], number: dict[str, int]) -> str:
    """Each chunk as `[n] label` over its quoted text, n from `number` (chunk id -> n). The
    document's title is quoted with its text: it is the document's words too."""
    return "\n\n".join(f"[{number[c.id]}] {label(c)}\n{quoted(titled(c))}" for c in chunks)


def titled(chunk: Chunk) -> str:
    """The chunk's text under its title (a chunk of a file starts with it already)."""
    if not chunk.title or chunk.text.startswith(chunk.title):
        return chunk.text
    return f"{chunk.title}\n\n{chunk.text}"


def label(chunk: Chunk) -> str:
    """Where the chunk comes from, on one line; web excerpts add their URL and date, so the
    model can weigh them."""
    if chunk.collection != "web":
        return f"(document {one_line(display_path(chunk.source))})"
    date = f", published {one_line(chunk.published, 40)}" if chunk.published else ""
    return f"(web page {one_line(chunk.source)}{date})"


def numbered_sentences(sentences: list[tuple[str, Chunk]]) -> str:
    """Evidence sentences numbered 1, 2 … one by one, under the document each comes from
    (`sentences`: the text and its chunk, in the order shown)."""
    lines, document = [], None
    for n, (text, chunk) in enumerate(sentences, 1):
        if (chunk.collection, chunk.source) != document:
            document = (chunk.collection, chunk.source)
            # Its identifier and title, quoted: a header's words are the document's too.
            title = f", titled {_inline(label_of(chunk))}" if label_of(chunk) else ""
            lines.append(f"\nFrom {label(chunk)[1:-1]}{title}:")
        lines.append(f"[{n}] {_inline(text)}")
    return "\n".join(lines).strip()


def _inline(text: str) -> str:
    """`text` quoted on one line: a sentence costs its words, not three lines of tags."""
    return f"<excerpt>{one_line(text, 2000)}</excerpt>"


def with_numbers(numbers: dict[str, int], chunks: list[Chunk]) -> dict[str, int]:
    """The run's excerpt numbers (chunk id -> n, as first shown), with `chunks` not shown
    before numbered on from the last."""
    numbers = dict(numbers)
    for chunk in chunks:
        numbers.setdefault(chunk.id, len(numbers) + 1)
    return numbers


def document_cards(chunks: list[Chunk]) -> str:
    """The chunks' documents, one line each: identifier and title, date, status and summary, as
    their facts give them, quoted."""
    lines = []
    for chunk in {(c.collection, c.source): c for c in chunks}.values():
        facts = chunk.facts
        known = [str(facts[k]) for k in ("date", "status") if facts.get(k)]
        about = f": {facts['summary']}" if facts.get("summary") else ""
        lines.append(f"- {label_of(chunk)}" + (f" ({', '.join(known)})" if known else "") + about)
    return quoted("\n".join(lines))
