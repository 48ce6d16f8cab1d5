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
    SectionHeadings,
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
from deepsift.report_shape import (
    echoes_query,
    is_english,
    labels,
    part_heading,
    shape_of,
    tokens_for,
)
from deepsift.state import Chunk, ResearchState, Usage
from deepsift.structured import ATTEMPTS, Schema, ask_structured

_SENTENCES = re.compile(r"(?<=[.!?])\s+")
HEADING_SENTENCES = 3  # of each section, shown to the headings call
HEADING_WORDS = 12  # a "heading" longer than this is a sentence
SENTENCES_AN_EXCERPT = 2  # at most, that a section is held to writing


def synthesize(state: ResearchState, deps: Deps) -> dict:
    """The report: sections planned from the evidence (deepsift.outline), written
    concurrently; then, from what the sections say, their headings and the report's title,
    key findings and conclusion. Every sentence's numbers and names are checked against the
    excerpts it cites (deepsift.claims); citations are resolved against the excerpts shown,
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
    writer = _Writer(state, deps, shown, language, spare_calls=max(0, spare // ATTEMPTS))
    words = shape.section_words(len(planned))
    title, findings, conclusion, sections = state["question"], [], [], []
    with ThreadPoolExecutor(max_workers=settings.llm_parallel) as pool:
        # Each call in a copy of this step's context: it stays part of the graph run
        # (callbacks, the replies a checkpointed run keeps: deepsift.replies).
        def submit(call, *args):
            return pool.submit(copy_context().run, call, *args)

        texts = [submit(writer.section, section, words) for section in planned]
        texts = [text.result() for text in texts]
        if texts:
            named = submit(writer.headings, texts, planned)
            queried = [_queried(section) for section in planned]
            framed = submit(
                writer.frame,
                list(zip(queried, texts, strict=True)),
                shape.findings,
                shape.conclusion_words,
            )
            sections = list(zip(_distinct(named.result(), planned), texts, strict=True))
            title, findings, conclusion = framed.result()
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
        spare_calls: int,
    ):
        self.question = state["question"]
        self.deps = deps
        self.number = {chunk.id: n for n, chunk in enumerate(shown, 1)}
        self.chunk_of = {n: chunk for n, chunk in enumerate(shown, 1)}
        self.language = (
            prompt.LANGUAGE.format(language=language) if language else prompt.QUESTION_LANGUAGE
        )
        self.check_names = is_english(language)
        # A section headed "Conclusion" would stand beside the report's own.
        self.reserved = list(labels(language).model_dump().values())
        local = deps.settings.uses_local_llm
        self.writing = LOCAL_WRITING if local else None
        self.summing = LOCAL_SUMMING if local else None
        self.spare_calls = spare_calls  # calls the budget leaves over, first asked first served
        self.usage = Usage()
        self._lock = Lock()

    def section(self, planned: PlannedSection, words: int) -> list[CitedSentence]:
        """The section's sentences, their claims checked."""
        query = "; ".join(planned.queries)
        if planned.part:  # another section answers the same queries from other excerpts
            query = f"{query} {prompt.GOES_ON}"
        user = prompt.SECTION_USER.format(
            question=self.question,
            query=query,
            excerpts=numbered(planned.chunks, self.number),
            words=words,
            sentences=_sentences(words),
            language=self.language,
        )
        asked = [SystemMessage(prompt.SECTION_SYSTEM), HumanMessage(user)]
        # The sentences asked, as many as its excerpts can carry: the embedded model stops
        # after three to five whatever it is asked, and a schema-enforcing server holds it on.
        least = {"sentences": min(_sentences(words), SENTENCES_AN_EXCERPT * len(planned.chunks))}
        reply = self._ask(
            asked, CitedSection, tokens_for(words), sampling=self.writing, least=least
        )
        citable = {self.number[c.id] for c in planned.chunks}
        sentences = clean(reply.sentences, citable) if reply else []
        sentences = _without_context_lines(sentences, planned.chunks)
        kept = self._checked(sentences, citable, " ".join(planned.queries), asked, reply)
        unwritten = CitedSentence(text="This part could not be written.", excerpts=[])
        return _present(kept) or [unwritten]

    def headings(
        self, sections: list[list[CitedSentence]], planned: list[PlannedSection]
    ) -> list[str]:
        """A heading for each section from what it says, shown without the question and the
        sub-queries (which a small model copies as headings). Where the reply gives some unfit
        to print, it is asked once more, told why, while calls are left over; a section's own
        query where neither reply gives one."""
        shown = "\n\n".join(
            f"Section {n}:\n" + " ".join(s.text for s in said[:HEADING_SENTENCES])
            for n, said in enumerate(sections, 1)
        )
        user = prompt.HEADINGS_USER.format(
            sections=shown, count=len(sections), language=self.language
        )
        asked = [SystemMessage(prompt.HEADINGS_SYSTEM), HumanMessage(user)]
        count = {"headings": len(sections)}  # one each: the embedded model gave 6 for 8
        tokens = 20 * len(sections) + 20
        reply = self._ask(asked, SectionHeadings, tokens, count, self.summing, count)
        fit = self._fit(reply, planned)
        # The embedded model, shown two or three sections, copies their first sentences.
        if reply and "" in fit and self._spare_call():
            turn = prompt.HEADINGS_AGAIN.format(language=self.language)
            again = [*asked, AIMessage(reply.model_dump_json()), HumanMessage(turn)]
            retried = self._ask(again, SectionHeadings, tokens, count, self.summing, count)
            second = self._fit(retried, planned)
            fit = [first or other for first, other in zip(fit, second, strict=True)]
        return [heading or _queried(s) for heading, s in zip(fit, planned, strict=True)]

    def _fit(self, reply: SectionHeadings | None, planned: list[PlannedSection]) -> list[str]:
        """Each section's heading from `reply`, or "" where it gives none fit to print."""
        written = reply.headings if reply else []
        return [
            _reader_heading(
                written[n] if n < len(written) else "",
                [self.question, *section.queries, *self.reserved],
            )
            for n, section in enumerate(planned)
        ]

    def frame(
        self, sections: list[tuple[str, list[CitedSentence]]], findings: int, words: int
    ) -> tuple[str, list[CitedSentence], list[CitedSentence]]:
        """The title, key findings and conclusion, citing only what the sections cite; a
        conclusion sentence that repeats a section or a finding word for word is left out,
        unless all do."""
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
        least = {"findings": findings, "conclusion": _sentences(words) - 1}
        tokens = tokens_for(words + 60 * findings)
        reply = self._ask(asked, ReportFrame, tokens, most, self.summing, least)
        if reply is None:
            return self.question, [], []
        found = clean(reply.findings, citable)[:findings]
        said = {s.text for _, part in sections for s in part} | {s.text for s in found}
        # A report keeps a conclusion that only repeats: less what the findings just above it
        # say, or, repeating only them (the embedded model copied all six), its first sentence.
        concluded = clean(reply.conclusion, citable)
        ending = (
            _unrepeated(concluded, said)
            or _unrepeated(concluded, {s.text for s in found})
            or concluded[:1]
        )
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
            if not self._spare_call():
                return None
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
            rewrite,
            self.check_names,
        )
        with self._lock:
            self.usage = self.usage + Usage(
                claims_checked=counts.checked,
                claims_rewritten=counts.rewritten,
                claims_dropped=counts.dropped,
            )
        return kept

    def _spare_call(self) -> bool:
        """Takes one of the calls the budget leaves over (a rewrite, a second headings call),
        if any is left."""
        with self._lock:
            if not self.spare_calls:
                return False
            self.spare_calls -= 1
            return True

    def _ask(
        self,
        messages: list[BaseMessage],
        schema: type[Schema],
        tokens: int,
        most: dict[str, int] | None = None,
        sampling: dict[str, float] | None = None,
        least: dict[str, int] | None = None,
    ) -> Schema | None:
        reply, usage = ask_structured(
            self.deps.llm,
            messages,
            schema,
            max_tokens=tokens,
            most=most,
            sampling=sampling,
            least=least,
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


def _reader_heading(text: str, asked: list[str]) -> str:
    """`text` as a section heading; "" when it is a question, one of `asked` (the report's
    question, the section's queries and the report's own headings) or longer than a
    heading."""
    heading = _heading(text, "")
    if not heading or echoes_query(heading, asked) or len(heading.split()) > HEADING_WORDS:
        return ""
    return heading


def _distinct(headings: list[str], planned: list[PlannedSection]) -> list[str]:
    """A heading that an earlier section already has is replaced by the section's own query
    (numbered for a part going on from another's)."""
    seen: set[str] = set()
    distinct = []
    for heading, section in zip(headings, planned, strict=True):
        if heading.casefold() in seen:
            heading = _heading(_queried(section), heading)
        seen.add(heading.casefold())
        distinct.append(heading)
    return distinct


def _queried(section: PlannedSection) -> str:
    """The section's first query as its heading; numbered where the section goes on from
    another's query ("… (2)"), so the two stay apart."""
    query = section.queries[0]
    return part_heading(query[:1].upper() + query[1:], section.part)


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
