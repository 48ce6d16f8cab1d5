"""Resolve a report's [n] citations against the excerpts the model was shown.

Numbers come only from chunks the graph tracked: a cited number that was not shown is removed.
The kept ones are renumbered by document, 1..m in order of first use, so two excerpts of one
file share a number and the Sources list names each file once, with the chunks cited from it.
"""

import re

from deepsift.records import Chunk, Source
from deepsift.report.evidence.documents import label_of
from deepsift.report.output.headings import SOURCES_LISTING, Labels, labels
from deepsift.text.locations import display_path
from deepsift.text.marks import MARK, cited, mark, mark_all, numbers_of
from deepsift.text.untrusted import flat, visible

# A mark with the spaces before it: a mark that is removed takes them along ("made up [7]." ->
# "made up.") and leaves the rest of the text as it was.
_CITATION = re.compile(rf"([ \t]*){MARK.pattern}")
_MARK_RUN = re.compile(rf"(?:{MARK.pattern})+")
_KEPT = "\x00{}\x01"  # a resolved mark, until every unresolved one is gone (visible() drops these)
# A list of sources the model wrote is removed, up to the end.
_OWN_SOURCES = re.compile(rf"\n#+[ \t]*{SOURCES_LISTING}(\n.*)?\Z", re.IGNORECASE | re.DOTALL)


def resolve_citations(text: str, shown: list[Chunk]) -> tuple[str, list[Source]]:
    """Return the report body with valid, renumbered citations, and the sources they cite."""
    text = _OWN_SOURCES.sub("", visible(text)).rstrip()
    documents: dict[str, Source] = {}

    def rewrite(match: re.Match) -> str:
        kept = []
        for number in numbers_of(match.group(2)):
            if 1 <= number <= len(shown):
                chunk = shown[number - 1]
                if chunk.source not in documents:
                    documents[chunk.source] = Source(
                        n=len(documents) + 1,
                        title=label_of(chunk),
                        source=chunk.source,
                        chunk_ids=[],
                    )
                document = documents[chunk.source]
                if chunk.id not in document.chunk_ids:
                    document.chunk_ids.append(chunk.id)
                kept.append(_KEPT.format(document.n))
        return match.group(1) + "".join(dict.fromkeys(kept)) if kept else ""

    body = _CITATION.sub(rewrite, text)
    # Removing a mark can join the text around it into another ("[[7]1]" -> "[1]"): it goes too.
    while _CITATION.search(body):
        body = _CITATION.sub("", body)
    body = body.replace("\x00", "[").replace("\x01", "]")
    # [1][2][1] -> [1][2]: marks that became the same document's number once renumbered
    body = _MARK_RUN.sub(lambda m: mark_all(dict.fromkeys(cited(m[0]))), body)
    return body, list(documents.values())


def cited_report(
    body: str,
    shown: list[Chunk],
    failures: list[str],
    says: Labels | None = None,
    remarks: list[str] | None = None,
) -> tuple[str, list[Source]]:
    """The report as delivered: citations resolved against the excerpts `shown`, then its
    Notes (sources that failed along the way, and `remarks` on the report itself), then the
    Sources; the fixed headings in the report's language (`says`)."""
    says = says or labels("")
    report, sources = resolve_citations(body, shown)
    if notes := notes_section(failures, remarks or [], says.notes):
        report += f"\n\n{notes}"
    return f"{report}\n\n{sources_section(sources, says.sources)}\n", sources


def notes_section(failures: list[str], remarks: list[str], heading: str = "Notes") -> str:
    """What failed along the way (web searches, pages), each once, and remarks on the report;
    "" when there is neither."""
    lines = [f"- {remark}" for remark in remarks]
    if failures:
        lines.append("- Some sources could not be searched or read:")
        # A failure names a URL from a search result: one line, so it cannot add a heading.
        lines += [f"  - {flat(failure)}" for failure in dict.fromkeys(failures)]
    return f"## {heading}\n\n" + "\n".join(lines) if lines else ""


def web_remark(searches: list[str]) -> list[str]:
    """The remark that says what each web search of the run returned; none without one."""
    if not searches:
        return []
    return ["The web was searched: " + "; ".join(dict.fromkeys(searches)) + "."]


def sources_section(sources: list[Source], heading: str = "Sources") -> str:
    lines = [f"{mark(s.n)} {_title(s.title)} — {_code(display_path(s.source))}" for s in sources]
    return f"## {heading}\n\n" + ("\n\n".join(lines) if lines else "No source was cited.")


def _title(title: str) -> str:
    """A document's title on one line, its Markdown marks escaped: a title cannot add a line
    to the list, a citation mark or a code span."""
    return re.sub(r"([\\`\[\]<>])", r"\\\1", flat(title))


def _code(path: str) -> str:
    """`path` as a code span on one line, fenced by more backticks than it holds."""
    path = flat(path)
    fence = "`" * (max(map(len, re.findall("`+", path)), default=0) + 1)
    return f"{fence} {path} {fence}" if fence != "`" else f"`{path}`"
