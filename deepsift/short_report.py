"""The short report of the answering agents (Search-o1, ReAct): the answer reached, then cited
findings from the excerpts the agent read, then Notes and Sources."""

from langchain_core.messages import HumanMessage, SystemMessage

from deepsift.citations import cited_report
from deepsift.cited_text import CitedText
from deepsift.deps import Deps
from deepsift.excerpts import numbered
from deepsift.prompts import short_report as prompt
from deepsift.state import Chunk, Source, Usage
from deepsift.structured import ask_structured


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
        findings = reply.render(set(number.values())) if reply else ""
        body.append(f"## Findings\n\n{findings or 'The findings could not be written.'}")
    else:
        body.append("Nothing relevant was found in the searched sources.")
    report, sources = cited_report("\n\n".join(body), shown, failures, remarks=remarks)
    return report, sources, usage
