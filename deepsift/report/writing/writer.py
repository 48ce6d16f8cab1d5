"""The report's model calls: each section from its excerpts, the headings and the frame (title,
key findings, conclusion) from what the sections say, and every sentence held to the excerpts
it cites (deepsift.report.checks.claims)."""

import re
from threading import Lock

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel

from deepsift.deps import Deps
from deepsift.llm.local_model import LOCAL_SUMMING, LOCAL_WRITING
from deepsift.llm.structured import Schema, ask_structured
from deepsift.prompts import synthesize as prompt
from deepsift.records import Chunk, Usage
from deepsift.report.checks.claims import hold_to_evidence, unsupported
from deepsift.report.checks.defects import defects
from deepsift.report.checks.run import CHECKS, Against, first_problem
from deepsift.report.checks.statements import repeated
from deepsift.report.evidence.documents import evidence_of, label_of
from deepsift.report.evidence.sentences import Evidence, PlannedSection, as_prose, reads_alone
from deepsift.report.output.headings import (
    is_english,
    labels,
    printed_heading,
    query_heading,
    reader_heading,
)
from deepsift.report.writing.cited_text import (
    Answered,
    CitedSentence,
    CitedText,
    ReportFrame,
    clean,
    with_marks,
)
from deepsift.report.writing.excerpts import document_cards, numbered_sentences, quoted
from deepsift.report.writing.length import tokens_for
from deepsift.report.writing.voice import QUOTES_VOICE, as_reported, named_in
from deepsift.run.state import ResearchState
from deepsift.text.amounts import numbers
from deepsift.text.asks import about_figures
from deepsift.text.dates import when
from deepsift.text.markup import plain
from deepsift.text.sentences import split_sentences
from deepsift.text.terms import terms
from deepsift.text.words import words as words_of

FRAME_SENTENCES = 2  # of each part's section, its answer first, shown to the frame call
CONCLUSION_SENTENCES = 4
# A restatement shorter than this share of its evidence sentence has left most of it out.
RESTATED_SHARE = 0.5
MATCHED = 0.4  # of an evidence sentence's words a restatement must share to be taken for it
# A part that asks how something came to be as it is wants its evidence in time order.
_EVOLVED = re.compile(r"(?i)\b(evolv\w*|histor\w*|over time|timeline|chronolog\w*|from .+ to )")
# The line naming a sentence's document, which a small model copies into its restatement.
_SHOWN_LABEL = re.compile(r"^\s*From (?:document|web page) .*?:\s+", re.IGNORECASE)
# A restatement of one evidence sentence: its figures and names by the claim check, between
# the reader's defects and these.
RESTATED_CHECKS = ["comparison", "cause", "claim", "source"]
ANSWER_WORDS = 40  # the answer's, in the section call's completion budget
# An answer holding this share of the terms the question has beyond its part restates the
# question ("The RFCs covering A, B, C and D describe how ..."); judged where there are at least
# PARROTED_LEAST such terms. Measured: .88-.89 for such answers, .06-.11 for real ones.
PARROTED, PARROTED_LEAST = 0.6, 6


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
        self.left_out: list[str] = []  # the problem of each sentence the checks left out
        # the problem of each restatement that gave way to its evidence sentence
        self.given_as_found: list[str] = []
        self.language = (
            prompt.LANGUAGE.format(language=language) if language else prompt.QUESTION_LANGUAGE
        )
        self.check_names = is_english(language)
        self.report_language = language
        # A section headed "Conclusion" (in the report's language) would stand beside its own.
        says = labels(language)
        self.reserved = [v for v in says.model_dump().values() if isinstance(v, str)]
        self.reserved.append(says.documents[0])
        local = deps.settings.uses_local_llm
        self.writing = LOCAL_WRITING if local else None
        self.summing = LOCAL_SUMMING if local else None
        self.spare_calls = spare_calls  # calls the budget leaves over, first asked first served
        self.usage = Usage()
        self._lock = Lock()

    def section(self, planned: PlannedSection, part: str) -> list[CitedSentence]:
        """The section: its answer first (the model's sentence that answers the part, held to
        the excerpts it cites; else the part's strongest evidence sentence), then its evidence
        sentences, each citing the excerpt it comes from. Those that do not read as a report's
        sentence on their own ("It was ...", "Location: ...", a document's "we") are restated
        by the model; a restatement that fails a check (its figures and names, or a reader's
        checks) gives way to the evidence sentence as the document words it, or, where that
        is in the document's own voice, leaves it out."""
        evidence = planned.evidence
        if _EVOLVED.search(part):  # how something evolved: a timeline, by the documents' dates
            evidence = sorted(evidence, key=lambda e: when(e.chunk.facts.get("date", "")))
        # "This RFC proposes …" reads alone once its document is named.
        unready = [e for e in evidence if not _reads_alone(e)]
        answer, restated = self._written(evidence, unready, part)
        said = []
        for e in evidence:
            sentences = restated.get(id(e), [])
            # Held to the sentence it restates and its document's title, as shown.
            shown = f"{label_of(e.chunk)} {e.chunk.title}: {e.text}"
            problem = self._problem(sentences, shown, e, part) if e in unready else ""
            if problem:
                with self._lock:
                    self.given_as_found.append(problem)
            if problem or e not in unready:
                sentences = [
                    CitedSentence(text=as_reported(t, e.chunk), excerpts=[])
                    for t in split_sentences(as_prose(e.text))
                ]
                if problem and any(QUOTES_VOICE in s.text for s in sentences):
                    continue  # its own voice, quoted, answers no part: it goes
            number = self.number[e.chunk.id]
            said += [s.model_copy(update={"excerpts": [number]}) for s in sentences]
        opener = self._answer(answer, evidence, part)
        if opener is None:  # the strongest sentence that answers it (with a figure if asked)
            figures = about_figures(part)
            opener = next((s for s in said if numbers(s.text) or not figures), None)
        if opener is None:
            return said
        return [
            opener,
            *(s for s in said if s is not opener and not repeated(s.text, [opener.text])),
        ]

    def _written(
        self, evidence: list[Evidence], unready: list[Evidence], part: str
    ) -> tuple[str, dict[int, list[CitedSentence]]]:
        """The model's answer to the part from the evidence, and its restatement of each
        `unready` sentence (by id()), matched to the one it restates by their words: a small
        model adds a sentence of its own or runs two into one, and then every later one is
        out of place."""
        shown = [*unready, *(e for e in evidence if e not in unready)]
        restate = ", ".join(str(n) for n in range(1, len(unready) + 1)) or "none"
        user = prompt.SECTION_USER.format(
            question=self.question,
            query=part,
            documents=document_cards([e.chunk for e in evidence]),
            excerpts=numbered_sentences([(e.text, e.chunk) for e in shown]),
            restate=restate,
            language=self.language,
        )
        asked = [SystemMessage(prompt.SECTION_SYSTEM), HumanMessage(user)]
        count = {"sentences": len(unready)}
        words = sum(len(e.text.split()) for e in unready) + ANSWER_WORDS
        reply = self._ask(asked, Answered, tokens_for(words), count, self.writing, count)
        if reply is None:
            return "", {}
        written = [as_prose(_SHOWN_LABEL.sub("", t)) for t in reply.sentences]
        written = [t for t in written if t.strip(" .")]
        matched: dict[int, list[CitedSentence]] = {}
        free = list(range(len(written)))
        for e in unready:
            best = max(free, key=lambda n: _overlap(written[n], e.text), default=None)
            if best is not None and _overlap(written[best], e.text) >= MATCHED:
                free.remove(best)
                named = named_in(written[best], e.chunk)  # its "we" is caught, not quoted
                matched[id(e)] = clean([CitedSentence(text=named, excerpts=[])])
        return reply.answer, matched

    def _answer(self, answer: str, evidence: list[Evidence], part: str) -> CitedSentence | None:
        """The model's answer as the section's first sentence, citing the excerpts that hold
        its figures and names (those of the documents it names first); None where it is empty
        or no excerpt of the section holds what it states, or a reader's check fails it."""
        written = named_in(as_prose(_SHOWN_LABEL.sub("", answer)), evidence[0].chunk)
        sentences = clean([CitedSentence(text=written, excerpts=[])])
        # A tag left over from the quoted excerpts ("…RFC 1728.</") is no answer either.
        if not answer.strip(" .") or not sentences or re.search(r"</|<[a-z]+>", written, re.I):
            return None
        text = sentences[0].text
        chunks = list({e.chunk.id: e.chunk for e in evidence}.values())
        stated = len(unsupported(text, [], self.check_names))  # its figures and names
        cited = [
            c
            for c in chunks
            if _names_document(text, c)
            or len(unsupported(text, [evidence_of(c)], self.check_names)) < stated
        ] or chunks[:1]
        context = f"{self.question} {part}"
        texts = [evidence_of(c) for c in cited]
        sources = tuple(f"{label_of(c)} {c.title} {c.source}" for c in cited)
        against = Against(cited=texts, context=context, sources=sources)
        asked = terms(self.question) - terms(part)  # what the other parts and the subject say
        if len(asked) >= PARROTED_LEAST and len(asked & terms(text)) >= PARROTED * len(asked):
            problem = "it restates the question instead of answering its part"
        elif missing := unsupported(text, [*texts, context], self.check_names):
            problem = f"not in its excerpts: {', '.join(missing)}"
        else:
            problem = first_problem(text, against, list(CHECKS), self.report_language)
        if problem:
            with self._lock:
                self.left_out.append(problem)
            return None
        return CitedSentence(text=text, excerpts=[self.number[c.id] for c in cited])

    def _problem(self, sentences: list[CitedSentence], shown: str, e: Evidence, part: str) -> str:
        """The first fault of a restatement of one evidence sentence: a figure or name it does
        not hold, or what a reader would catch (deepsift.report.checks.statements)."""
        context = f"{self.question} {part}"
        said = " ".join(s.text for s in sentences)
        kept = {value for value, _ in numbers(said)}
        if any(value not in kept for value, _ in numbers(e.text)):
            return "it leaves out a figure of its sentence"
        if len(said.split()) < RESTATED_SHARE * len(e.text.split()):
            return "it leaves out most of its sentence"
        source = f"{label_of(e.chunk)} {e.chunk.title} {e.chunk.source}"
        against = Against(cited=[shown], context=context, sources=(source,), causes=[e.text])
        language = self.report_language
        for sentence in sentences:
            if problem := first_problem(sentence.text, against, ["defects"], language):
                return problem
            if missing := unsupported(sentence.text, [shown, context], self.check_names):
                return f"not in its excerpts: {', '.join(missing)}"
            if problem := first_problem(
                sentence.text, against, RESTATED_CHECKS, self.report_language
            ):
                return problem
        return ""

    def frame(
        self, parts: list[tuple[str, list[CitedSentence]]]
    ) -> tuple[str, list[str], list[CitedSentence]]:
        """The title; the parts as headings, in the report's language where one is asked
        (else, or where the reply gives none fit to print, each part's own words); and the
        conclusion's sentences that pass the checks, citing only what the sections cite,
        written from each part's answer and the sentence after it."""
        shown = "\n\n".join(
            f"{n}. {part}\n" + quoted(" ".join(with_marks(s) for s in said[:FRAME_SENTENCES]))
            for n, (part, said) in enumerate(parts, 1)
        )
        citable = {n for _, said in parts for s in said for n in s.excerpts}
        user = prompt.FRAME_USER.format(
            question=self.question, parts=shown, count=len(parts), language=self.language
        )
        asked = [SystemMessage(prompt.FRAME_SYSTEM), HumanMessage(user)]
        most = {"headings": len(parts), "conclusion": CONCLUSION_SENTENCES}
        tokens = tokens_for(25 * CONCLUSION_SENTENCES) + 15 * len(parts) + 20
        reply = self._ask(asked, ReportFrame, tokens, most, self.summing)
        named = reply.headings if reply and self.report_language else []
        headings = [
            (reader_heading(named[n], [self.question, *self.reserved]) if n < len(named) else "")
            or query_heading(part)
            for n, (part, _) in enumerate(parts)
        ]
        if reply is None:
            return self.question, headings, []
        concluded = [self.readable(s) for s in clean(reply.conclusion, citable)]
        texts = {n: evidence_of(self.chunk_of[n]) for n in citable if n in self.chunk_of}
        documents = {
            n: f"{label_of(self.chunk_of[n])} {self.chunk_of[n].title} {self.chunk_of[n].source}"
            for n in texts
        }
        kept = self._checked(concluded[:CONCLUSION_SENTENCES], texts, documents, "", asked, reply)
        title = printed_heading(reply.title, self.question)
        return title, headings, [s for s in kept if s and s.text]

    def _checked(
        self,
        sentences: list[CitedSentence],
        excerpts: dict[int, str],
        documents: dict[int, str],
        restated: str,
        asked: list[BaseMessage],
        reply: BaseModel | None,
    ) -> list[CitedSentence | None]:
        """The claim check and a reader's checks of what `reply` (to the messages `asked`)
        wrote, against the `excerpts` it was shown (number -> text; `documents`: number -> the
        title and path of its document). A rewrite is asked as the next turn of that
        conversation, so the server's prompt cache serves its excerpts instead of reading them
        again."""
        citable = set(excerpts)

        def faults(sentence: CitedSentence) -> str:
            against = Against(
                cited=[excerpts[n] for n in sentence.excerpts if n in excerpts],
                context=f"{self.question} {restated}",
                sources=tuple(documents[n] for n in sentence.excerpts if n in documents),
            )
            return first_problem(sentence.text, against, list(CHECKS), self.report_language)

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

    def readable(self, sentence: CitedSentence) -> CitedSentence:
        """The sentence without markup, and where it cites one document, that document named
        where it says "this RFC" (deepsift.report.checks.defects)."""
        cited = {
            self.chunk_of[n].source: self.chunk_of[n]
            for n in sentence.excerpts
            if n in self.chunk_of
        }
        text = plain(sentence.text)
        if len(cited) == 1:
            text = named_in(text, next(iter(cited.values())))
        return sentence.model_copy(update={"text": text})

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


def _reads_alone(e: Evidence) -> bool:
    """Whether an evidence sentence, its document named, reads as the report's own: it leans
    on no sentence before it and does not speak as its document ("we")."""
    named = named_in(e.text, e.chunk)
    return reads_alone(named) and "voice" not in defects(named)


def _names_document(text: str, chunk: Chunk) -> bool:
    """Whether the sentence names the chunk's document by its identifier."""
    identifier = str(chunk.facts.get("id", "")).strip()
    return bool(identifier) and identifier.casefold() in text.casefold()


def _overlap(written: str, evidence: str) -> float:
    """The share of the evidence sentence's words that `written` has."""
    theirs = {w.casefold() for w in words_of(evidence)}
    return len(theirs & {w.casefold() for w in words_of(written)}) / max(1, len(theirs))
