import re
from concurrent.futures import ThreadPoolExecutor
from contextvars import copy_context
from threading import Lock

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel

from deepsift import budget
from deepsift.citations import cited_report, lists_sources
from deepsift.cited_text import (
    CitedSection,
    CitedSentence,
    CitedText,
    ReportFrame,
    clean,
    render,
    with_marks,
)
from deepsift.claims import hold_to_evidence
from deepsift.deps import Deps
from deepsift.excerpts import numbered
from deepsift.models import LOCAL_SUMMING, LOCAL_WRITING
from deepsift.outline import PlannedSection, outline
from deepsift.prompts import synthesize as prompt
from deepsift.report_shape import SHAPES, is_english, labels, tokens_for
from deepsift.state import Chunk, ResearchState, Usage
from deepsift.structured import Schema, ask_structured

_SENTENCES = re.compile(r"(?<=[.!?])\s+")


def synthesize(state: ResearchState, deps: Deps) -> dict:
    """The report: sections planned from the evidence (deepsift.outline), written concurrently,
    then its title, key findings and conclusion from what the sections say. Every sentence's
    numbers and names are checked against the excerpts it cites (deepsift.claims); citations
    are resolved against the excerpts shown, never against the model's text."""
    settings = deps.settings
    shape = SHAPES[state.get("report_length") or settings.report_length]
    language = state.get("report_language", settings.report_language)
    says = labels(language)
    affordable = budget.sections_affordable(state.get("usage"), settings)
    planned = outline(state, deps.embedder, min(shape.sections, affordable), shape.excerpts)
    shown = [chunk for section in planned for chunk in section.chunks]
    # The claim check may rewrite once per part (each section, the frame) when all fit.
    parts = len(planned) + 1
    may_rewrite = budget.calls_left(state.get("usage"), settings) >= budget.structured(2 * parts)
    writer = _Writer(state, deps, shown, language, may_rewrite)
    words = shape.section_words(len(planned))
    with ThreadPoolExecutor(max_workers=settings.llm_parallel) as pool:
        # Each section in a copy of this step's context: its calls stay part of the graph run
        # (callbacks, the replies a checkpointed run keeps: deepsift.replies).
        sections = [pool.submit(copy_context().run, writer.section, s, words) for s in planned]
        sections = [section.result() for section in sections]
    sections = _distinct_headings(sections, planned)
    body = [f"## {heading}\n\n{render(said)}" for heading, said in sections]
    title, findings, conclusion = state["question"], [], []
    if sections:
        title, findings, conclusion = writer.frame(sections, shape.findings, shape.conclusion_words)
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
    remarks = []
    if dropped := writer.usage.claims_dropped:
        remarks.append(
            f"{dropped} sentence(s) left out: the excerpts they cite do not state their figures "
            "or names."
        )
    report_text, sources = cited_report(
        "\n\n".join(report), shown, state.get("notes", []), says, remarks
    )
    return {"report": report_text, "sources": sources, "usage": writer.usage}


class _Writer:
    """The report's model calls (from several threads); `usage` holds what they cost and what
    the claim check did."""

    def __init__(
        self,
        state: ResearchState,
        deps: Deps,
        shown: list[Chunk],
        language: str,
        may_rewrite: bool,
    ):
        self.question = state["question"]
        self.deps = deps
        self.number = {chunk.id: n for n, chunk in enumerate(shown, 1)}
        self.chunk_of = {n: chunk for n, chunk in enumerate(shown, 1)}
        self.language = (
            prompt.LANGUAGE.format(language=language) if language else prompt.QUESTION_LANGUAGE
        )
        self.check_names = is_english(language)
        local = deps.settings.uses_local_llm
        self.writing = LOCAL_WRITING if local else None
        self.summing = LOCAL_SUMMING if local else None
        self.may_rewrite = may_rewrite
        self.usage = Usage()
        self._lock = Lock()

    def section(self, planned: PlannedSection, words: int) -> tuple[str, list[CitedSentence]]:
        user = prompt.SECTION_USER.format(
            question=self.question,
            query="; ".join(planned.queries),
            excerpts=numbered(planned.chunks, self.number),
            words=words,
            sentences=_sentences(words),
            language=self.language,
        )
        asked = [SystemMessage(prompt.SECTION_SYSTEM), HumanMessage(user)]
        reply = self._ask(asked, CitedSection, tokens_for(words), sampling=self.writing)
        citable = {self.number[c.id] for c in planned.chunks}
        sentences = clean(reply.sentences, citable) if reply else []
        sentences = _without_context_lines(sentences, planned.chunks)
        kept = self._checked(sentences, citable, " ".join(planned.queries), asked, reply)
        heading = _heading(reply.heading if reply else "", _as_heading(planned.queries[0]))
        unwritten = CitedSentence(text="This part could not be written.", excerpts=[])
        return heading, _present(kept) or [unwritten]

    def frame(
        self, sections: list[tuple[str, list[CitedSentence]]], findings: int, words: int
    ) -> tuple[str, list[CitedSentence], list[CitedSentence]]:
        """The title, key findings and conclusion, citing only what the sections cite; a
        conclusion sentence that repeats a section's word for word is left out."""
        text = "\n\n".join(f"## {heading}\n\n{render(said)}" for heading, said in sections)
        citable = {n for _, said in sections for s in said for n in s.excerpts}
        user = prompt.FRAME_USER.format(
            question=self.question,
            sections=text,
            findings=findings,
            words=words,
            language=self.language,
        )
        asked = [SystemMessage(prompt.FRAME_SYSTEM), HumanMessage(user)]
        # At most the findings asked and a sentence more than the conclusion's share: a list
        # cannot run on to max_tokens.
        most = {"findings": findings, "conclusion": _sentences(words) + 1}
        reply = self._ask(asked, ReportFrame, tokens_for(words + 60 * findings), most, self.summing)
        if reply is None:
            return self.question, [], []
        found = clean(reply.findings, citable)[:findings]
        said = {s.text for _, part in sections for s in part} | {s.text for s in found}
        ending = _unrepeated(clean(reply.conclusion, citable), said)
        kept = self._checked(found + ending, citable, "", asked, reply)
        title = _heading(reply.title, self.question)
        return title, _present(kept[: len(found)]), _present(kept[len(found) :])

    def _checked(
        self,
        sentences: list[CitedSentence],
        citable: set[int],
        restated: str,
        asked: list[BaseMessage],
        reply: BaseModel | None,
    ) -> list[CitedSentence | None]:
        """The claim check of what `reply` (to the messages `asked`) wrote. A rewrite is asked
        as the next turn of that conversation, so the server's prompt cache serves its
        excerpts instead of reading them again."""
        excerpts = {n: self.chunk_of[n].text for n in citable if n in self.chunk_of}

        def rewrite(failed: list[tuple[CitedSentence, list[str]]]) -> list[CitedSentence] | None:
            listed = "\n".join(
                f"{i}. {with_marks(sentence)} (not in its excerpts: {', '.join(missing)})"
                for i, (sentence, missing) in enumerate(failed, 1)
            )
            turn = prompt.REWRITE.format(sentences=listed, language=self.language)
            messages = [*asked, AIMessage(reply.model_dump_json()), HumanMessage(turn)]
            words = sum(len(sentence.text.split()) for sentence, _ in failed)
            rewritten = self._ask(messages, CitedText, tokens_for(words), sampling=self.writing)
            return clean(rewritten.sentences, citable) if rewritten else None

        kept, counts = hold_to_evidence(
            sentences,
            excerpts,
            f"{self.question} {restated}",
            rewrite if self.may_rewrite else None,
            self.check_names,
        )
        with self._lock:
            self.usage = self.usage + Usage(
                claims_checked=counts.checked,
                claims_rewritten=counts.rewritten,
                claims_dropped=counts.dropped,
            )
        return kept

    def _ask(
        self,
        messages: list[BaseMessage],
        schema: type[Schema],
        tokens: int,
        most: dict[str, int] | None = None,
        sampling: dict[str, float] | None = None,
    ) -> Schema | None:
        reply, usage = ask_structured(
            self.deps.llm, messages, schema, max_tokens=tokens, most=most, sampling=sampling
        )
        with self._lock:
            self.usage = self.usage + usage
        return reply


def _without_context_lines(
    sentences: list[CitedSentence], chunks: list[Chunk]
) -> list[CitedSentence]:
    """`sentences` without those that are an excerpt's context line ("Title > 4. Comparison
    with the approved budget", deepsift.ingest.chunking), or part of one: the embedded model
    copies that line as prose. It states nothing."""
    # A file's chunk is its context line, a blank line, then its passage; a web page's
    # snippet can open with its title but has no such line.
    lines = [
        c.text.split("\n\n", 1)[0].casefold()
        for c in chunks
        if c.title and c.text.startswith(c.title) and "\n\n" in c.text
    ]

    def copied(sentence: CitedSentence) -> bool:
        said = sentence.text.casefold().strip(" .").removeprefix("the ")
        return bool(said) and any(said in line for line in lines)

    return [s for s in sentences if not copied(s)]


def _sentences(words: int) -> int:
    """About how many sentences `words` words make."""
    return max(2, round(words / 22))


def _heading(text: str, fallback: str) -> str:
    """A heading as the report prints it: one line, no Markdown marks; never one that reads as
    the report's own Sources list."""
    text = " ".join(text.replace("#", " ").replace("*", " ").split()).strip(" :.")
    if not text or len(text) > 120 or lists_sources(text):
        return fallback
    return text


def _distinct_headings(
    sections: list[tuple[str, list[CitedSentence]]], planned: list[PlannedSection]
) -> list[tuple[str, list[CitedSentence]]]:
    """A heading that an earlier section already has (a small model may give two sections the
    report's question) is replaced by the section's own query."""
    seen: set[str] = set()
    distinct = []
    for (heading, said), section in zip(sections, planned, strict=True):
        if heading.casefold() in seen:
            heading = _heading(_as_heading(section.queries[0]), heading)
        seen.add(heading.casefold())
        distinct.append((heading, said))
    return distinct


def _as_heading(query: str) -> str:
    return query[:1].upper() + query[1:]


def _unrepeated(sentences: list[CitedSentence], said: set[str]) -> list[CitedSentence]:
    """`sentences` without what repeats `said` word for word (a small model copies whole
    sentences, several to one entry, into its conclusion)."""
    seen = {part.casefold() for text in said for part in _SENTENCES.split(text)}
    kept = []
    for sentence in sentences:
        parts = [p for p in _SENTENCES.split(sentence.text) if p.casefold() not in seen]
        if parts:
            kept.append(sentence.model_copy(update={"text": " ".join(parts)}))
    return kept


def _present(sentences: list[CitedSentence | None]) -> list[CitedSentence]:
    return [s for s in sentences if s is not None]
