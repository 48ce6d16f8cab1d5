"""A follow-up question on a finished run. The documents it is about are found first
(deepsift.followups.documents); what it asks of their facts (who wrote one, what replaced it) is
answered from them in code (deepsift.followups.facts); the rest in one model call from the
passages of those documents, of the run's own evidence, and of a new search of the run's
sources (retrieval only, no model call): the run's excerpts may hold a document's other chunks
but not the one that answers (on the public RFC follow-ups whose answer is in a document the
report cites, 4 of 12 answers were in chunks the run had not retrieved). What the search finds
is kept in the run where the answer cites it. The answer is a few cited sentences of prose,
each held to its excerpts as the report's are, citing with the report's numbers, every part of
the question answered or named (deepsift.followups.answered); with no support it says so, and
what was searched."""

from collections.abc import Mapping
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel

from deepsift.deps import Deps
from deepsift.followups.answered import answers, not_answered, question_parts, unanswered
from deepsift.followups.documents import described_document, document_key, named_documents
from deepsift.followups.facts import asked_fact, fact_sentence, facts_prose
from deepsift.followups.grounding import about_asked, specific_names
from deepsift.followups.passages import passages, pasted, whole
from deepsift.llm.embedders import similarities
from deepsift.llm.structured import ask_structured
from deepsift.prompts import followup as prompt
from deepsift.records import Chunk, FollowUp, Source, Usage
from deepsift.report.checks.claims import hold_to_evidence
from deepsift.report.checks.run import Against, first_problem
from deepsift.report.evidence.documents import label_of
from deepsift.report.evidence.sentences import as_prose
from deepsift.report.output.headings import is_english
from deepsift.report.writing.cited_text import CitedSentence, Sentences, clean, render
from deepsift.report.writing.excerpts import numbered_sentences
from deepsift.retrieval.search import search_among, search_source, within_document
from deepsift.retrieval.sources import WEB
from deepsift.text.markup import plain
from deepsift.text.terms import held_shares, terms
from deepsift.text.words import words

NEAREST_CHUNKS = 6  # of each source's excerpts, those nearest the question give passages
SHOWN_PASSAGES = 12  # shown to the model: some 500 tokens, so one call stays short
RANK_BONUS = 0.1  # over 1 + the rank of its excerpt: the question's words may be in its title
TERMS_BONUS = 0.3  # times the share of the question's terms (the rarer weigh more) it holds
NAMED_BONUS = 0.1  # a passage of a document the question names by identifier
ANSWER_TOKENS = 240
NOT_SAID = "The documents do not say."
# An answer is held to its excerpts as a report sentence is; figures and names by the claim check.
ANSWER_CHECKS = ["comparison", "cause", "claim"]


class FollowUpAnswer(BaseModel):
    found: bool = True
    sentences: Sentences = []


def answer_followup(
    values: Mapping[str, Any], question: str, deps: Deps
) -> tuple[FollowUp, dict[str, Chunk]]:
    """The answer to `question` from the run's saved state (`values`), and the chunks the new
    search adds to its evidence: those the answer cites ({} when it rests on the run's own).
    The documents the question is about are found first (deepsift.followups.documents); what it
    asks of their facts is answered from them in code, the rest in one model call from their
    passages, the run's and the search's."""
    known: dict[str, Chunk] = dict(values.get("chunks", {}))
    found, search, usage = _search_again(question, values, deps)
    pool = [*known.values(), *found.values()]
    sources = values.get("sources_to_search", [])
    named = named_documents(question, pool, deps, sources)
    leads = list(dict.fromkeys((c.collection, c.source) for c in found.values()))
    about = named[:1] or [d for d in [described_document(question, pool, deps, leads)] if d]
    facts, asked = _from_facts(question, named, about[:1], pool, deps, sources)
    found |= {c.id: c for c, _ in facts if c.id not in known}
    said: list[CitedSentence] = []
    shown: list[tuple[str, Chunk]] = []
    if asked:
        # A document the question names leads; one it describes competes with the others.
        own = [
            c
            for document in named or about
            for c in (within_document(asked, document, deps, NEAREST_CHUNKS) or [document])
        ]
        found |= {c.id: c for c in own if c.id not in known}
        first, others = (own, pool) if named else ([], [*own, *pool])
        shown = _evidence(asked, first, others, deps, {(c.collection, c.source) for c in named})
        model_said, cost = _ask(asked, shown, deps)
        usage += cost
        said = model_said or []
        parts = question_parts(asked)
        if facts or len(parts) > 1:  # a part left unanswered is named, not passed over
            said += [not_answered(part) for part in unanswered(parts, said)]
    for n, (document, sentence) in enumerate(facts):
        shown.append((facts_prose(document), document))
        said.insert(n, CitedSentence(text=sentence, excerpts=[len(shown)]))
    if not any(s.excerpts for s in said):
        documents = len({c.source for c in known.values()})
        tried = [f"the run's {len(known)} excerpts from {documents} documents", *search]
        tried[:0] = [f"the facts and passages of {label_of(d)}" for d in named or about]
        text = f"{NOT_SAID} Searched: {'; '.join(tried)}."
        record, added = FollowUp(request=question, kind="answer", text=text), {}
    else:
        text, cited_sources = _cited(said, shown, values)
        # What the search found joins the run's evidence where the answer rests on it.
        cited = {i for source in cited_sources for i in source.chunk_ids}
        added = {i: c for i, c in found.items() if i in cited and i not in known}
        record = FollowUp(
            request=question,
            kind="answer",
            text=text,
            sources=cited_sources,
            searched=search if added else [],
        )
    return record.model_copy(update={"usage": usage}), added


def _from_facts(
    question: str,
    named: list[Chunk],
    about: list[Chunk],
    pool: list[Chunk],
    deps: Deps,
    sources: list[str],
) -> tuple[list[tuple[Chunk, str]], str]:
    """The parts of `question` that ask a document's facts (who wrote it, what replaced it …),
    each answered in a sentence from them with the document it rests on; and the question
    that is left for the model ("" when none is). `named`: the documents the whole question
    names; a part that names none asks about the one it is `about`, or about the document the
    part before it named ("Which PEP superseded PEP 3, and who wrote it?")."""
    answered, left = [], []
    subject = about[0] if about else None
    parts = question_parts(question)
    for part in parts:
        in_part = named if len(parts) == 1 else named_documents(part, pool, deps, sources)
        document = in_part[0] if in_part else subject
        fact = asked_fact(part, document) if is_english(deps.settings.report_language) else ""
        sentence = fact_sentence(fact, document, {}) if fact else ""
        if not sentence:
            left.append(part)
            continue
        if fact in ("replaces", "replaced_by"):  # named whole, and "it" after is that one
            listed = " ".join(map(str, document.facts[fact]))
            if related := named_documents(listed, pool, deps, sources):
                sentence = fact_sentence(fact, document, {document_key(r): r for r in related})
                subject = related[0]
        answered.append((document, sentence))
    return answered, question if not answered else " ".join(left)


def _evidence(
    question: str,
    own: list[Chunk],
    chunks: list[Chunk],
    deps: Deps,
    named: set[tuple[str, str]] = frozenset(),
) -> list[tuple[str, Chunk]]:
    """What is shown for `question`: the passages of the chunks of the document it is about
    (`own`, nearest first), then of the excerpts nearest it (each collection's by its own
    hybrid search among them, the web's by meaning), and their documents' facts, the best
    SHOWN_PASSAGES by meaning and by the question's rarer terms (those of a document it names,
    `named`, ahead), grouped by document in the order of their excerpts."""
    nearest = list({c.id: c for c in [*own, *_nearest(question, chunks, deps)]}.values())
    candidates, seen = [], set()
    for rank, chunk in enumerate(nearest):
        for passage in passages(chunk, first=chunk.source not in seen):
            candidates.append((passage, chunk, rank))
        seen.add(chunk.source)
    candidates = whole(candidates)
    if not candidates:
        return []
    texts = [passage for passage, _, _ in candidates]
    near = similarities(deps.embedder, [question], texts, documents=True)[0]
    held = held_shares(terms(question), [terms(text) for text in texts])
    scores = [
        near[i]
        + TERMS_BONUS * held[i]
        + RANK_BONUS / (1 + rank)
        + NAMED_BONUS * ((chunk.collection, chunk.source) in named)
        for i, (_, chunk, rank) in enumerate(candidates)
    ]
    best = sorted(range(len(candidates)), key=lambda i: -scores[i])[:SHOWN_PASSAGES]
    order = {c.source: n for n, c in reversed(list(enumerate(nearest)))}
    best.sort(key=lambda i: (order[candidates[i][1].source], i))
    return [(candidates[i][0], candidates[i][1]) for i in best]


def _nearest(question: str, chunks: list[Chunk], deps: Deps) -> list[Chunk]:
    """The NEAREST_CHUNKS excerpts of each source nearest `question`, the sources' lists taken
    in turn (their scores are not on one scale)."""
    by_source: dict[str, list[Chunk]] = {}
    for chunk in chunks:
        by_source.setdefault(chunk.collection, []).append(chunk)
    lists = []
    for source, own in by_source.items():
        if source == WEB or not deps.store.exists(source):
            near = similarities(deps.embedder, [question], [c.text for c in own], documents=True)
            order = sorted(range(len(own)), key=lambda i: -near[0][i])
            lists.append([own[i] for i in order[:NEAREST_CHUNKS]])
            continue
        by_id = {c.id: c for c in own}
        hits = search_among(question, source, list(by_id), deps, NEAREST_CHUNKS)
        lists.append([by_id[hit.id] for hit in hits if hit.id in by_id])
    turns = max(map(len, lists), default=0)
    return [own[n] for n in range(turns) for own in lists if n < len(own)]


def _search_again(
    question: str, values: Mapping[str, Any], deps: Deps
) -> tuple[dict[str, Chunk], list[str], Usage]:
    """The question searched in the sources the run searched (the web only if it had it): the
    chunks found, what was searched in words, and what the web search cost."""
    found: dict[str, Chunk] = {}
    said, usage = [], Usage()
    for source in values.get("sources_to_search", []):
        if source != WEB and not deps.store.exists(source):
            continue  # a collection dropped since the run
        update = search_source(question, source, deps)
        found.update(update["chunks"])
        usage += update.get("usage", Usage())
        said.append("the web" if source == WEB else f"the collection {source}")
    if said:
        said = [f"{', '.join(said)} for “{question}”"]
    return found, said, usage


def _ask(
    question: str, shown: list[tuple[str, Chunk]], deps: Deps
) -> tuple[list[CitedSentence] | None, Usage]:
    """The model's answer from the shown sentences (numbered 1 … in order), its sentences held
    to the excerpts they cite; None when it finds no answer or none of it holds."""
    if not shown:
        return None, Usage()
    language = deps.settings.report_language
    user = prompt.USER.format(
        excerpts=numbered_sentences(shown),
        question=question,
        language=prompt.LANGUAGE.format(language=language)
        if language
        else prompt.QUESTION_LANGUAGE,
    )
    messages = [SystemMessage(prompt.SYSTEM), HumanMessage(user)]
    # One attempt: a follow-up is one call; a reply that does not parse counts as no answer.
    reply, usage = ask_structured(
        deps.llm, messages, FollowUpAnswer, attempts=1, max_tokens=ANSWER_TOKENS
    )
    if reply is None or not reply.found:
        return None, usage
    excerpts = {
        n: f"{label_of(chunk)} {chunk.title}: {text}" for n, (text, chunk) in enumerate(shown, 1)
    }
    sentences = [
        _with_citation(s.model_copy(update={"text": plain(as_prose(s.text))}), excerpts)
        for s in clean(reply.sentences, set(excerpts))
    ]

    def faults(sentence: CitedSentence) -> str:
        against = Against(cited=[excerpts[n] for n in sentence.excerpts], context=question)
        return first_problem(sentence.text, against, ANSWER_CHECKS, language)

    kept, _ = hold_to_evidence(
        [s for s in sentences if s.excerpts],
        excerpts,
        question,
        rewrite=None,
        check_names=is_english(language),
        faults=faults,
    )
    names = specific_names(question, list(excerpts.values()))
    kept = [
        s
        for s in kept
        if s
        and _says_something(s.text)
        and not pasted(s.text)
        and about_asked([excerpts[n] for n in s.excerpts], names)
    ]
    return (kept if answers(question, kept) else None), usage


def _says_something(text: str) -> bool:
    """Three words or more: a small model may answer "..." citing an excerpt."""
    return sum(sum(ch.isalpha() for ch in word) >= 2 for word in words(text)) >= 3


def _with_citation(sentence: CitedSentence, excerpts: dict[int, str]) -> CitedSentence:
    """A sentence the model left uncited cites the shown sentence sharing most of its terms,
    when that one holds at least half of them; else it stays uncited (and is left out)."""
    if sentence.excerpts:
        return sentence
    said = terms(sentence.text)
    best = max(excerpts, key=lambda n: len(said & terms(excerpts[n])), default=None)
    if best is None or len(said & terms(excerpts[best])) < 0.5 * len(said):
        return sentence
    return sentence.model_copy(update={"excerpts": [best]})


def _cited(
    said: list[CitedSentence], shown: list[tuple[str, Chunk]], values: Mapping[str, Any]
) -> tuple[str, list[Source]]:
    """The answer with its marks as the report's numbers for documents the report (or an
    earlier follow-up) cites, and new numbers after theirs for the others; the documents it
    cites."""
    number = {s.source: s.n for s in values.get("sources", [])}
    for earlier in values.get("followups", []):
        for s in earlier.sources:
            number.setdefault(s.source, s.n)
    cited: dict[str, Source] = {}
    renumbered = []
    for sentence in said:
        marks = []
        for n in sentence.excerpts:
            chunk = shown[n - 1][1]
            if chunk.source not in number:
                number[chunk.source] = max(number.values(), default=0) + 1
            document = cited.setdefault(
                chunk.source,
                Source(
                    n=number[chunk.source], title=label_of(chunk), source=chunk.source, chunk_ids=[]
                ),
            )
            if chunk.id not in document.chunk_ids:
                document.chunk_ids.append(chunk.id)
            marks.append(document.n)
        renumbered.append(sentence.model_copy(update={"excerpts": list(dict.fromkeys(marks))}))
    return render(renumbered), sorted(cited.values(), key=lambda s: s.n)
