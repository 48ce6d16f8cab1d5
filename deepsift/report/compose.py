"""The report of a research run: the question's parts, each part's evidence chosen without a
model, sections written from that evidence, then framed, checked and cited."""

from concurrent.futures import ThreadPoolExecutor
from contextvars import copy_context

from deepsift.deps import Deps
from deepsift.llm.structured import ATTEMPTS
from deepsift.records import Chunk
from deepsift.report.checks.defects import defects
from deepsift.report.checks.run import CHECKS, unchecked
from deepsift.report.checks.statements import said_again
from deepsift.report.evidence.amounts import compared_amounts, comparison
from deepsift.report.evidence.choice import choose_documents
from deepsift.report.evidence.sentences import PlannedSection, plan
from deepsift.report.output.citations import cited_report, web_remark
from deepsift.report.output.documents_table import documents_table
from deepsift.report.output.headings import distinct_headings, labels, query_heading
from deepsift.report.question.parts import part_searches, question_parts
from deepsift.report.writing.cited_text import CitedSentence, render, with_marks
from deepsift.report.writing.length import shape_of
from deepsift.report.writing.writer import Writer
from deepsift.retrieval.ranking import ranked
from deepsift.retrieval.search import search_parts
from deepsift.retrieval.sources import WEB
from deepsift.run import budget
from deepsift.run.state import ResearchState
from deepsift.text.queries import same_query

CANDIDATES = 8  # a section: the run's best-ranked excerpts whose sentences may become evidence
MOST_SECTIONS = 10  # a question of many parts gets a section each, up to this many
SENTENCE_WORDS = 16  # about, of an evidence sentence: how many a section's words need
# A section's answer and the sentences that add a fact to it: a reader stops reading on.
MOST_SENTENCES = 10


def compose_report(state: ResearchState, deps: Deps, search: bool = True, added: str = "") -> dict:
    """The report. The question's parts (from its wording; else the sub-queries) each get
    their own search, the documents that answer them (deepsift.report.evidence.choice) and
    evidence sentences from those documents only, chosen in code; a part's answer and its
    section are written from its evidence only, and every sentence checked: its figures and
    names against its excerpts (deepsift.report.checks.claims), what a reader would catch
    (deepsift.report.checks.statements). Each part's answer is its key finding, its section
    going on from it, and the conclusion ties the answers together; a part no evidence
    answers is said to be unanswered. Citations are resolved against the excerpts shown,
    never against the model's text. Rewriting a finished report
    (deepsift.followups.rewrites), `search` is off, and a part `added` to the question's is the
    only one searched."""
    settings = deps.settings
    question = state["question"]
    shape = shape_of(state, settings.report_length)
    language = state.get("report_language", settings.report_language)
    says = labels(language)
    parts = question_parts(question) or _asked(state, question)[: shape.sections]
    parts += [added] if added else []
    chunks, queries, leads, found = _gathered(state, deps, parts, shape.sections, search, added)
    affordable = budget.sections_affordable(state.get("usage"), settings)
    sections = min(len(parts), MOST_SECTIONS, affordable)
    per_section = max(4, min(MOST_SENTENCES, round(shape.section_words(sections) / SENTENCE_WORDS)))
    chosen = choose_documents(parts, queries, chunks, deps.embedder, leads)
    planned, unanswered = plan(
        parts, queries, chunks, deps.embedder, sections, per_section, leads, chosen
    )
    shown = list({c.id: c for s in planned for c in s.chunks}.values())
    # Calls left over go to the checks' rewrites and to asking the headings again.
    spare = budget.calls_left(state.get("usage"), settings) - budget.structured(
        len(planned) + budget.FINISHING
    )
    writer = Writer(state, deps, shown, language, max(0, spare // ATTEMPTS))
    title, findings, body, conclusion, unanswered = _written(
        writer, planned, parts, shown, unanswered, question
    )
    findings, body, conclusion = _readable(findings, body, conclusion, writer)
    findings, body, conclusion = _unrepeated(findings, body, conclusion, writer)
    ending = [s for s in conclusion if s]
    ending += [
        CitedSentence(text=says.unanswered.format(part=parts[n]), excerpts=[]) for n in unanswered
    ]
    report = [f"# {title}"]
    if found_list := [s for s in findings if s]:
        report.append(
            f"## {says.findings}\n\n" + "\n".join(f"- {with_marks(s)}" for s in found_list)
        )
    if table := documents_table(
        _first_cited([findings, *(t for _, t in body), conclusion], writer), says
    ):
        report.append(table)
    report += [f"## {heading}\n\n{render(said)}" for heading, said in body]
    if body and ending:
        report.append(f"## {says.conclusion}\n\n{render(ending)}")
    if not body:
        report.append(
            "The run's LLM-call budget (max_llm_calls) was spent before the report."
            if state.get("chunks") and not affordable
            else "Nothing relevant was found in the searched sources."
        )
    report_text, sources = cited_report(
        "\n\n".join(report), shown, state.get("notes", []), says, _notes(state, writer, language)
    )
    return {"report": report_text, "sources": sources, "usage": writer.usage, "chunks": found}


def _gathered(
    state: ResearchState, deps: Deps, parts: list[str], sections: int, search: bool, added: str
) -> tuple[list[Chunk], list[list[str]], list, dict[str, Chunk]]:
    """Each part searched on its own (only the `added` one when `search` is off): the excerpts
    to choose evidence from, best first, what each part was searched with, the documents its
    search found first, and the chunks that search found."""
    question = state["question"]
    searches = [part_searches(part, question) for part in parts]
    collections = [s for s in state.get("sources_to_search", []) if s != WEB]
    known = state.get("chunks", {})
    fresh = [q if search or part == added else [] for q, part in zip(searches, parts, strict=True)]
    found, leads = search_parts(parts, fresh, collections, known, deps)
    queries = [searched + _own(part, state) for searched, part in zip(searches, parts, strict=True)]
    gathered = {**known, **found}
    chunks = ranked({**state, "chunks": gathered})[: CANDIDATES * sections]
    ranked_ids = {c.id for c in chunks}
    chunks += [c for c in found.values() if c.id not in ranked_ids]
    return chunks, queries, leads, found


def _written(
    writer: Writer,
    planned: list[PlannedSection],
    parts: list[str],
    shown: list[Chunk],
    unanswered: list[int],
    question: str,
) -> tuple[str, list, list, list, list[int]]:
    """The sections written from their evidence, each part's answer its key finding, then
    the frame (title, conclusion) from those answers: (title, findings, body, conclusion,
    parts unanswered)."""
    title, findings, conclusion, body = question, [], [], []
    with ThreadPoolExecutor(max_workers=writer.deps.settings.llm_parallel) as pool:
        # Each call in a copy of this step's context: it stays part of the graph run
        # (callbacks, the replies a checkpointed run keeps: deepsift.llm.replies).
        texts = [pool.submit(copy_context().run, writer.section, s, parts[s.part]) for s in planned]
        texts = [t.result() for t in texts]
    kept = [(s, t) for s, t in zip(planned, texts, strict=True) if t]
    _open_with_comparisons(kept, parts, shown, writer.number)
    answered = [s.part for s, _ in kept]
    unanswered = sorted(set(unanswered) | (set(range(len(parts))) - set(answered)))
    if kept:
        title, headings, conclusion = writer.frame([(parts[s.part], t) for s, t in kept])
        # Each part's answer is its key finding, said there once; its section goes on from it.
        findings = [said[0] for _, said in kept]
        headings = distinct_headings(headings, [query_heading(parts[s.part]) for s, _ in kept])
        body = [(h, said[1:]) for h, (_, said) in zip(headings, kept, strict=True)]
    return title, findings, body, conclusion, unanswered


def _first_cited(said: list[list], writer: Writer) -> list[tuple[int, Chunk]]:
    """Each cited document once, by its first cited excerpt (number, chunk), in reading order."""
    first: dict[str, tuple[int, Chunk]] = {}
    for n in (n for sentences in said for s in sentences if s for n in s.excerpts):
        first.setdefault(writer.chunk_of[n].source, (n, writer.chunk_of[n]))
    return list(first.values())


def _notes(state: ResearchState, writer: Writer, language: str) -> list[str]:
    """The report's remarks: what the web searches returned, the sentences the checks left out
    or gave in their document's words, and the checks the report's language did not allow."""
    remarks = web_remark(state.get("web_searches", [])) + _remarks(writer.left_out)
    if given := len(writer.given_as_found):
        remarks.append(
            f"{given} sentence(s) given in their document's own words: the model's restatement "
            "did not hold to them."
        )
    if skipped := unchecked(list(CHECKS), language):
        remarks.append(
            f"Not checked in {language} (the rules read English words): {'; '.join(skipped)}."
        )
    return remarks


def _open_with_comparisons(
    sections: list[tuple[PlannedSection, list[CitedSentence]]],
    parts: list[str],
    shown: list,
    number: dict[str, int],
) -> None:
    """A part that sets two amounts against each other opens its first section with both and
    their difference, worked out in code (deepsift.report.evidence.amounts)."""
    for n, part in enumerate(parts):
        own = [(section, said) for section, said in sections if section.part == n]
        if not own or not (sides := compared_amounts(part)):
            continue
        chunks = {c.id: c for c in [*(c for s, _ in own for c in s.chunks), *shown]}
        if said := comparison(sides, list(chunks.values()), number):
            own[0][1].insert(0, said)


def _asked(state: ResearchState, question: str) -> list[str]:
    """The sub-queries as parts, when the wording gives none: each once, in the order asked."""
    asked: dict[str, str] = {}
    for query in state.get("sub_queries", []):
        asked.setdefault(same_query(query), query)
    return list(asked.values()) or [question]


def _own(part: str, state: ResearchState) -> list[str]:
    """A sub-query that is the part itself: its search's finds count as the part's own."""
    return [q for q in state.get("sub_queries", []) if same_query(q) == same_query(part)]


def _readable(
    findings: list[CitedSentence | None],
    body: list[tuple[str, list[CitedSentence]]],
    conclusion: list[CitedSentence | None],
    writer: Writer,
) -> tuple[list, list, list]:
    """The report without the sentences a reader would stop at (deepsift.report.checks.defects): a
    fragment, a document's "we", an unnamed "this RFC", markup; each left out is noted."""

    def kept(sentence: CitedSentence | None) -> CitedSentence | None:
        if sentence is None:
            return None
        sentence = writer.readable(sentence)
        if caught := defects(sentence.text):
            writer.left_out.append(f"a reader would stop at it ({', '.join(caught)})")
            return None
        return sentence

    return _each_kept(findings, body, conclusion, kept)


def _unrepeated(
    findings: list[CitedSentence | None],
    body: list[tuple[str, list[CitedSentence]]],
    conclusion: list[CitedSentence | None],
    writer: Writer,
) -> tuple[list, list, list]:
    """The report without the sentences that say again what an earlier one says (REPEATED of
    their words in it), in reading order: findings, sections, conclusion (a finding left out
    becomes None: they answer the parts in order)."""
    earlier: list[str] = []

    def kept(sentence: CitedSentence | None) -> CitedSentence | None:
        if sentence is None:
            return None
        if problem := said_again(sentence.text, earlier):
            writer.left_out.append(problem)
            return None
        earlier.append(sentence.text)
        return sentence

    return _each_kept(findings, body, conclusion, kept)


def _each_kept(
    findings: list[CitedSentence | None],
    body: list[tuple[str, list[CitedSentence]]],
    conclusion: list[CitedSentence | None],
    kept,
) -> tuple[list, list, list]:
    """`kept` applied to each sentence in reading order: findings, sections, conclusion. A
    finding or conclusion sentence it leaves out becomes None (they answer the parts in
    order); a section it empties goes."""
    findings = [kept(s) for s in findings]
    body = [(heading, [s for s in map(kept, said) if s]) for heading, said in body]
    return findings, [(h, said) for h, said in body if said], [kept(s) for s in conclusion]


def _remarks(left_out: list[str]) -> list[str]:
    """One note for each kind of problem that left sentences out."""
    kinds: dict[str, int] = {}
    for problem in left_out:
        kind = problem.split(":")[0]
        if kind == "not in its excerpts":
            kind = "the excerpts they cite do not state their figures or names"
        kinds[kind] = kinds.get(kind, 0) + 1
    return [f"{n} sentence(s) left out: {kind}." for kind, n in kinds.items()]
