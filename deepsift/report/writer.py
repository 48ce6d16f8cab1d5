"""The report's model calls: each section from its excerpts, the headings and the frame (title,
key findings, conclusion) from what the sections say, and every sentence held to the excerpts
it cites (deepsift.report.claims)."""

from threading import Lock

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel

from deepsift.deps import Deps
from deepsift.graph.state import ResearchState
from deepsift.llm.models import LOCAL_SUMMING, LOCAL_WRITING
from deepsift.llm.structured import Schema, ask_structured
from deepsift.prompts import synthesize as prompt
from deepsift.records import Chunk, Usage
from deepsift.report import checks
from deepsift.report.cited_text import (
    CitedSection,
    CitedSentence,
    CitedText,
    ReportFrame,
    SectionHeadings,
    clean,
    render,
    with_marks,
)
from deepsift.report.claims import hold_to_evidence
from deepsift.report.excerpts import numbered
from deepsift.report.headings import (
    is_english,
    labels,
    printed_heading,
    query_heading,
    reader_heading,
)
from deepsift.report.outline import PlannedSection
from deepsift.report.shape import tokens_for
from deepsift.text.sentences import split_sentences

HEADING_SENTENCES = 3  # of each section, shown to the headings call
SENTENCES_AN_EXCERPT = 2  # at most, that a section is held to writing


class Writer:
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
        self.left_out: list[str] = []  # the problem of each sentence the checks left out
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
        return [
            heading or query_heading(s.queries[0], s.part)
            for heading, s in zip(fit, planned, strict=True)
        ]

    def _fit(self, reply: SectionHeadings | None, planned: list[PlannedSection]) -> list[str]:
        """Each section's heading from `reply`, or "" where it gives none fit to print."""
        written = reply.headings if reply else []
        return [
            reader_heading(
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
        title = printed_heading(reply.title, self.question)
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

        def faults(sentence: CitedSentence) -> str:
            """What a reader would catch (deepsift.report.checks), against its excerpts."""
            cited = [excerpts[n] for n in sentence.excerpts if n in excerpts]
            documents = [
                f"{self.chunk_of[n].title} {self.chunk_of[n].source}"
                for n in sentence.excerpts
                if n in self.chunk_of
            ]
            return (
                checks.stitched(sentence.text, cited)
                or checks.unstated_cause(sentence.text, cited)
                or checks.unsupported_claim(sentence.text, cited, f"{self.question} {restated}")
                or checks.misdescribed_source(sentence.text, documents)
            )

        def rewrite(failed: list[tuple[CitedSentence, str]]) -> list[CitedSentence] | None:
            if not self._spare_call():
                return None
            listed = "\n".join(
                f"{i}. {with_marks(sentence)} ({problem})"
                for i, (sentence, problem) in enumerate(failed, 1)
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
            faults,
        )
        with self._lock:
            self.left_out += counts.dropped_for
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


def _unrepeated(sentences: list[CitedSentence], said: set[str]) -> list[CitedSentence]:
    """`sentences` without what repeats `said` word for word (a small model copies whole
    sentences, several to one entry, into its conclusion)."""
    seen = {part.casefold() for text in said for part in split_sentences(text)}
    kept = []
    for sentence in sentences:
        parts = [p for p in split_sentences(sentence.text) if p.casefold() not in seen]
        if parts:
            kept.append(sentence.model_copy(update={"text": " ".join(parts)}))
    return kept


def _present(sentences: list[CitedSentence | None]) -> list[CitedSentence]:
    return [s for s in sentences if s is not None]
