"""The table of the documents a report cites, built from their own facts
(deepsift.ingest.facts): identifier, title, date, status, authors and what each says, in the
order of their dates where they give them (a timeline), each row citing its document."""

from deepsift.records import Chunk
from deepsift.report.output.headings import Labels
from deepsift.text.dates import when
from deepsift.text.marks import mark
from deepsift.text.markup import plain

LEAST_DOCUMENTS = 2  # a table of one document is a sentence
MOST_AUTHORS = 3
CELL_CHARS = 200


def documents_table(cited: list[tuple[int, Chunk]], says: Labels) -> str:
    """The section, or "" when fewer than LEAST_DOCUMENTS cited documents state an
    identifier, a date, a status or authors. `cited`: an excerpt number and its chunk, one per
    document, in the order the report first cites them."""
    known = [(n, c) for n, c in cited if {"id", "date", "status", "authors"} & set(c.facts)]
    if len(known) < LEAST_DOCUMENTS:
        return ""
    rows = sorted(known, key=lambda row: when(row[1].facts.get("date", "")))
    heading, *columns = says.documents
    lines = [f"## {heading}", "", "| " + " | ".join(columns) + " |", "|---" * len(columns) + "|"]
    for n, chunk in rows:
        facts = chunk.facts
        authors = list(facts.get("authors", []))
        shown = ", ".join(authors[:MOST_AUTHORS]) + (
            " et al." if len(authors) > MOST_AUTHORS else ""
        )
        title = facts.get("title") or chunk.title
        cells = [
            facts.get("id", ""),
            f"“{title}”" if title else "",
            facts.get("date", ""),
            facts.get("status", ""),
            shown,
            facts.get("summary", ""),
        ]
        cells = [_cell(str(c)) for c in cells]
        cells[-1] = f"{cells[-1]} {mark(n)}".strip()
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _cell(text: str) -> str:
    """A fact as a table cell: plain, on one line, its pipes and angle brackets escaped (a
    fact's tags are its text, never markup, and never deleted), cut to CELL_CHARS."""
    text = " ".join(text.split()).replace("<", "&lt;").replace(">", "&gt;")
    text = plain(text).replace("|", "\\|")
    return text if len(text) <= CELL_CHARS else text[: CELL_CHARS - 1].rstrip() + "…"
