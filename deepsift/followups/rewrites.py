"""A finished report rewritten from the run's own evidence, without researching again: shorter
or longer, in another language, with one more section (whose part alone is searched), or as a
table of what it says of each document (no model call)."""

import re
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from deepsift.deps import Deps
from deepsift.records import Chunk, FollowUp, Source, Usage
from deepsift.report.compose import compose_report
from deepsift.report.output.headings import LANGUAGES, labels
from deepsift.text.marks import cited
from deepsift.text.sentences import split_sentences

_SECTION = re.compile(
    r"(?i)\badd(?:\s+(?:a|one|another|new|more))*\s+(?:section|chapter|part)\s+"
    r"(?:on|about|covering|for|that covers|explaining)\s+(?P<part>.+?)[.?!]*$"
)
_LANGUAGE = re.compile(rf"(?i)\b(?:in|into|to|auf|en)\s+({'|'.join(LANGUAGES)})\b")
_BRIEF = re.compile(
    r"(?i)\b(shorter|short|brief\w*|concise\w*|condense\w*|shorten\w*|summari[sz]e\w*)\b"
)
_LONG = re.compile(r"(?i)\b(longer|lengthen\w*|in (?:more )?depth|more detail\w*|expand\w*)\b")
_TABLE = re.compile(r"(?i)\b(?:as|in|into)\s+(?:a\s+)?table\b|\btabular\b|\btabulate\b")
# A request that opens like a question, or ends like one, asks about the report's subject,
# though it may say "shorter" or "expanded"; "Can you make it shorter?" asks for a rewrite.
_QUESTION = re.compile(
    r"(?i)^\s*(who|whom|whose|what|which|when|where|why|how)\b"
    r"|^(?!\s*(?:can|could|would|will)\s+you\b).*\?\s*$"
)
CELL_SENTENCES = 3  # of what the report says of a document, in its row of the table


class Reshape(BaseModel):
    length: str = ""  # brief or long; "": as the run's
    language: str = ""  # "": as the run's
    table: bool = False
    section: str = ""  # a part added to the question's, with a section of its own


def reshaping(request: str) -> Reshape | None:
    """What `request` asks the report to become; None when it is a question about it."""
    if _QUESTION.match(request):
        return None
    section = _SECTION.search(request)
    rest = request[: section.start()] if section else request
    language = _LANGUAGE.search(rest)
    shape = Reshape(
        length="brief" if _BRIEF.search(rest) else "long" if _LONG.search(rest) else "",
        language=language[1].capitalize() if language else "",
        table=bool(_TABLE.search(rest)),
        section=section["part"].strip() if section else "",
    )
    return shape if shape != Reshape() else None


def reshaped_report(
    values: Mapping[str, Any], request: str, shape: Reshape, deps: Deps
) -> tuple[FollowUp, dict[str, Chunk]]:
    """The report's new version from the run's evidence (`values`: its saved state), and the
    chunks an added section's search found."""
    # A rewrite goes on from the latest version: "brief" after "in German" stays in German.
    latest = ([f for f in values.get("followups", []) if f.kind == "report"] or [None])[-1]
    report = latest.text if latest else values.get("report", "")
    sources = latest.sources if latest else values.get("sources", [])
    language = latest.language if latest else values.get("report_language", "")
    length = latest.length if latest else values.get("report_length", "")
    usage, found, searched = Usage(), {}, []
    if shape.length or shape.language or shape.section:
        language, length = shape.language or language, shape.length or length
        state = {
            **values,
            "usage": Usage(),  # the rewrite has a budget of its own
            "report_length": length,
            "report_language": language or deps.settings.report_language,
        }
        written = compose_report(state, deps, search=False, added=shape.section)
        report, sources, usage = written["report"], written["sources"], written["usage"]
        found = written["chunks"]
        if shape.section:
            searched = [f"the run's collections for “{shape.section}”"]
    if shape.table:
        report = as_table(report, language, sources)
    record = FollowUp(
        request=request,
        kind="report",
        text=report,
        sources=sources,
        searched=searched,
        language=language,
        length=length,
        usage=usage,
    )
    return record, found  # compose_report gives only chunks the run did not hold


def as_table(report: str, language: str, sources: list[Source]) -> str:
    """The report as its title, then a table of what it says of each document it cites (its
    sentences citing it, the first CELL_SENTENCES), in the order of their numbers, then its
    Notes and Sources as they were."""
    says = labels(language)
    ending = re.search(rf"^## (?:{re.escape(says.notes)}|{re.escape(says.sources)})$", report, re.M)
    body = report[: ending.start()] if ending else report
    title = next((line for line in body.splitlines() if line.startswith("# ")), "")
    said: dict[int, list[str]] = {}
    for line in body.splitlines():
        text = line.strip().removeprefix("- ")
        if not text or text.startswith(("#", "|")):
            continue
        for sentence in split_sentences(text):
            for n in dict.fromkeys(cited(sentence)):
                said.setdefault(n, []).append(sentence.strip().replace("|", "\\|"))
    _, document, *_, what = says.documents
    title_of = {s.n: s.title.replace("|", "\\|") for s in sources}
    rows = [
        f"| [{n}] {title_of.get(n, '')} | {' '.join(said[n][:CELL_SENTENCES])} |"
        for n in sorted(said)
    ]
    table = "\n".join([f"| {document} | {what} |", "|---|---|", *rows])
    rest = report[ending.start() :].strip() if ending else ""
    return "\n\n".join(filter(None, [title, table, rest])) + "\n"
