"""The short report of the answering agents (Search-o1, ReAct): the answer reached, then cited
findings from the excerpts the agent read, then Notes and Sources. Each finding's numbers and
names are checked against the excerpts it cites, as in the deepsift report
(deepsift.report.checks.claims); one that fails is left out (no rewrite: the report stays one
call), and the Notes say so."""

from collections.abc import Mapping
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage

from deepsift.deps import Deps
from deepsift.llm.structured import ask_structured
from deepsift.prompts import short_report as prompt
from deepsift.records import Chunk, Source, Usage
from deepsift.report.checks.claims import hold_to_evidence
from deepsift.report.output.citations import cited_report
from deepsift.report.output.headings import is_english
from deepsift.report.writing.cited_text import CitedText, clean, render
from deepsift.report.writing.excerpts import numbered
from deepsift.text.marks import cited

REPORT_EXCERPTS = 8  # the excerpts read that the short report is written from, at most


def short_report(
    question: str,
    answer: str,
    shown: list[Chunk],
    failures: list[str],
    deps: Deps,
    remarks: list[str] | None = None,
) -> tuple[str, list[Source], Usage]:
    """The report, the sources it cites and what writing it cost (one structured call when
    there are excerpts, none otherwise)."""
    usage = Usage()
    remarks = list(remarks or [])
    body = [f"# {question}", f"**Answer:** {answer or 'not found'}"]
    if shown:
        number = {chunk.id: n for n, chunk in enumerate(shown, 1)}
        messages = [
            SystemMessage(prompt.SYSTEM),
            HumanMessage(
                prompt.USER.format(
                    question=question, answer=answer, excerpts=numbered(shown, number)
                )
            ),
        ]
        reply, usage = ask_structured(
            deps.llm, messages, CitedText, max_tokens=deps.settings.section_tokens
        )
        sentences = clean(reply.sentences, set(number.values())) if reply else []
        excerpts = {n: chunk.text for chunk, n in zip(shown, number.values(), strict=True)}
        # The answer may be computed (ReAct's calculator): a finding may restate it.
        kept, counts = hold_to_evidence(
            sentences,
            excerpts,
            f"{question} {answer}",
            rewrite=None,
            check_names=is_english(deps.settings.report_language),
        )
        usage = usage + Usage(claims_checked=counts.checked, claims_dropped=counts.dropped)
        if counts.dropped:
            remarks.append(
                f"{counts.dropped} sentence(s) left out: the excerpts they cite do not state "
                "their figures or names."
            )
        findings = render([s for s in kept if s])
        body.append(f"## Findings\n\n{findings or 'The findings could not be written.'}")
    else:
        body.append("Nothing relevant was found in the searched sources.")
    report, sources = cited_report("\n\n".join(body), shown, failures, remarks=remarks)
    return report, sources, usage


def report_excerpts(state: Mapping[str, Any], said: str) -> list[Chunk]:
    """The excerpts the run read, in the order it read them, those that `said` (what the
    agent wrote from them) cites first."""
    chunks = state.get("chunks", {})
    numbers = state.get("numbers", {})
    read = sorted((n, chunk_id) for chunk_id, n in numbers.items() if chunk_id in chunks)
    marked = set(cited(said))
    first = [chunk_id for n, chunk_id in read if n in marked]
    ordered = first + [chunk_id for _, chunk_id in read if chunk_id not in first]
    return [chunks[chunk_id] for chunk_id in ordered[:REPORT_EXCERPTS]]
