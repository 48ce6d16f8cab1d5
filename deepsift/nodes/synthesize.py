"""The report step: sections planned from the evidence, written by the report writer, then
framed and cited (deepsift.report)."""

from concurrent.futures import ThreadPoolExecutor
from contextvars import copy_context

from deepsift.deps import Deps
from deepsift.graph import budget
from deepsift.graph.state import ResearchState
from deepsift.llm.structured import ATTEMPTS
from deepsift.report.checks import repeated
from deepsift.report.citations import cited_report
from deepsift.report.cited_text import CitedSentence, render, with_marks
from deepsift.report.headings import distinct_headings, labels, query_heading
from deepsift.report.outline import outline
from deepsift.report.shape import shape_of
from deepsift.report.writer import Writer


def synthesize(state: ResearchState, deps: Deps) -> dict:
    """The report: sections planned from the evidence (deepsift.report.outline), written
    concurrently; then, from what the sections say, their headings and the report's title,
    key findings and conclusion. Every sentence's numbers and names are checked against the
    excerpts it cites (deepsift.report.claims); citations are resolved against the excerpts shown,
    never against the model's text."""
    settings = deps.settings
    shape = shape_of(state, settings.report_length)
    language = state.get("report_language", settings.report_language)
    says = labels(language)
    affordable = budget.sections_affordable(state.get("usage"), settings)
    planned = outline(state, deps.embedder, min(shape.sections, affordable), shape.excerpts)
    shown = [chunk for section in planned for chunk in section.chunks]
    # Calls left over go to the claim check's rewrites of a part (a section, the frame) and to
    # asking the headings again.
    spare = budget.calls_left(state.get("usage"), settings) - budget.structured(
        len(planned) + budget.FINISHING
    )
    writer = Writer(state, deps, shown, language, spare_calls=max(0, spare // ATTEMPTS))
    words = shape.section_words(len(planned))
    title, findings, conclusion, sections = state["question"], [], [], []
    with ThreadPoolExecutor(max_workers=settings.llm_parallel) as pool:
        # Each call in a copy of this step's context: it stays part of the graph run
        # (callbacks, the replies a checkpointed run keeps: deepsift.llm.replies).
        def submit(call, *args):
            return pool.submit(copy_context().run, call, *args)

        texts = [submit(writer.section, section, words) for section in planned]
        texts = [text.result() for text in texts]
        if texts:
            named = submit(writer.headings, texts, planned)
            queried = [query_heading(s.queries[0], s.part) for s in planned]
            framed = submit(
                writer.frame,
                list(zip(queried, texts, strict=True)),
                shape.findings,
                shape.conclusion_words,
            )
            sections = list(zip(distinct_headings(named.result(), queried), texts, strict=True))
            title, findings, conclusion = framed.result()
    findings, sections, conclusion = _unrepeated(findings, sections, conclusion, writer)
    body = [f"## {heading}\n\n{render(said)}" for heading, said in sections]
    report = [f"# {title}"]
    if findings:
        report.append(f"## {says.findings}\n\n" + "\n".join(f"- {with_marks(s)}" for s in findings))
    report += body
    if conclusion:
        report.append(f"## {says.conclusion}\n\n{render(conclusion)}")
    if not sections:
        report.append(
            "The run's LLM-call budget (max_llm_calls) was spent before the report."
            if state.get("chunks") and not affordable
            else "Nothing relevant was found in the searched sources."
        )
    report_text, sources = cited_report(
        "\n\n".join(report), shown, state.get("notes", []), says, _remarks(writer.left_out)
    )
    return {"report": report_text, "sources": sources, "usage": writer.usage}


def _unrepeated(
    findings: list[CitedSentence],
    sections: list[tuple[str, list[CitedSentence]]],
    conclusion: list[CitedSentence],
    writer: Writer,
) -> tuple[list[CitedSentence], list[tuple[str, list[CitedSentence]]], list[CitedSentence]]:
    """The report without the sentences that say again what an earlier one says (REPEATED of
    their words in it), in reading order: findings, sections, conclusion. A section keeps its
    first sentence and the conclusion its first, so neither is left empty."""
    earlier: list[str] = []

    def kept(sentences: list[CitedSentence]) -> list[CitedSentence]:
        mine = [
            s for s in sentences if not repeated(s.text, earlier) and not earlier.append(s.text)
        ]
        mine = mine or sentences[:1]
        left_out = "it says again what another sentence of the report says"
        writer.left_out += [left_out] * (len(sentences) - len(mine))
        return mine

    findings = kept(findings)
    sections = [(heading, kept(said)) for heading, said in sections]
    return findings, sections, kept(conclusion)


def _remarks(left_out: list[str]) -> list[str]:
    """One note for each kind of problem that left sentences out."""
    kinds: dict[str, int] = {}
    for problem in left_out:
        kind = problem.split(":")[0]
        if kind == "not in its excerpts":
            kind = "the excerpts they cite do not state their figures or names"
        kinds[kind] = kinds.get(kind, 0) + 1
    return [f"{n} sentence(s) left out: {kind}." for kind, n in kinds.items()]
