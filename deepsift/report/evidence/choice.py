"""Which documents answer each part of the question, judged whole before any of their
sentences is chosen: a document's own facts (identifier, title, summary) and its best passage,
both by nearness to what the part was searched with, and how high the part's own search ranked
it. A part asking for "the first" or "the latest" takes the earliest or the latest of the
documents that stand near the top. A document no part chooses gives the report no evidence,
so it is neither cited nor listed (deepsift.report.output.documents_table)."""

import re

import numpy as np
from pydantic import BaseModel

from deepsift.llm.embedders import Embedder, similarities
from deepsift.records import Chunk
from deepsift.report.evidence.documents import label_of
from deepsift.report.question.parts import part_items
from deepsift.text.dates import when
from deepsift.text.terms import held_shares, stem, terms
from deepsift.text.words import words

MOST_DOCUMENTS = 3  # a part's documents, at most: its answer and what completes it
# Of the best document's score, how near another must come to answer the same part.
MARGIN = 0.08
LEAD_BONUS, LEADS = 0.1, 5  # the part's own search ranked it among its first LEADS documents
# Times the share of the part's terms (weighted by rarity) that the card holds: a year or a
# name the part asks for ("the roadmap for 2021") stands in the document's title or date.
CARD_TERMS_BONUS = 0.4
# How much a document's mean score over all the parts counts against it for one: a document
# near every part (about the question's subject) answers none of them in particular.
SUBJECT_WEIGHT = 0.5
DATED_MARGIN = 0.15  # "the first": the earliest of the documents this near the best
SUMMARY_CHARS = 300
_FIRST = re.compile(r"(?i)\b(first|original(?:ly)?|initial(?:ly)?|earliest|introduc\w*|began)\b")
_LATEST = re.compile(r"(?i)\b(latest|most recent|newest|current(?:ly)?|last|today)\b")

Document = tuple[str, str]  # (collection, source)


class Card(BaseModel):
    """A document as the choice sees it: its facts and the chunks of it the run gathered."""

    document: Document
    chunks: list[Chunk]  # best-ranked first

    @property
    def text(self) -> str:
        """Its identifier, title and summary (its opening, where its facts have no summary)."""
        first = self.chunks[0]
        summary = str(first.facts.get("summary", "")).strip()
        if not summary:
            opening = next((c for c in self.chunks if c.position == 0), first)
            summary = opening.body
        return f"{label_of(first)}. {' '.join(summary.split())[:SUMMARY_CHARS]}"

    @property
    def date(self) -> tuple[int, str]:
        return when(str(self.chunks[0].facts.get("date", "")))


def cards_of(chunks: list[Chunk]) -> list[Card]:
    """Each document of the chunks once, in the order of its best-ranked chunk."""
    grouped: dict[Document, list[Chunk]] = {}
    for chunk in chunks:
        grouped.setdefault((chunk.collection, chunk.source), []).append(chunk)
    return [Card(document=d, chunks=c) for d, c in grouped.items()]


def document_scores(
    queries: list[list[str]],
    cards: list[Card],
    embedder: Embedder,
    leads: list[list[Document]],
    less_subject: bool = True,
) -> np.ndarray:
    """parts x documents: the nearness of the part's queries to the document's card and to its
    best passage (the mean over the queries: a query with the question's names added stands
    near every document about the subject), and a bonus for the part's own search ranking it
    first; with `less_subject`, less a share of the document's mean over the parts
    (_less_subject)."""
    asked = [q for part_queries in queries for q in part_queries]
    owner = [n for n, part_queries in enumerate(queries) for _ in part_queries]
    passages = [c for card in cards for c in card.chunks]
    whose = [n for n, card in enumerate(cards) for _ in card.chunks]
    texts = [card.text for card in cards] + [c.body for c in passages]
    near = similarities(embedder, asked, texts, documents=True)
    card_near, passage_near = near[:, : len(cards)], near[:, len(cards) :]
    best_passage = np.full((len(asked), len(cards)), -1.0)
    for column, n in enumerate(whose):
        best_passage[:, n] = np.maximum(best_passage[:, n], passage_near[:, column])
    scores = np.zeros((len(queries), len(cards)))
    for row, n in enumerate(owner):
        scores[n] += (card_near[row] + best_passage[row]) / len(queries[n])
    # "3037-roadmap-2021": a file name's words, each its own.
    bags = [
        {stem(w) for w in words(re.sub(r"[-_]", " ", f"{card.text} {card.date[1]}").casefold())}
        for card in cards
    ]
    for n, part_queries in enumerate(queries):
        for column, share in enumerate(held_shares(terms(_numbers_apart(part_queries[0])), bags)):
            scores[n, column] += CARD_TERMS_BONUS * share
    column_of = {card.document: n for n, card in enumerate(cards)}
    for n, lead in enumerate(leads):
        for rank, document in enumerate(lead[:LEADS]):
            if (column := column_of.get(document)) is not None:
                scores[n, column] += LEAD_BONUS / (1 + rank)
    return _less_subject(scores) if less_subject else scores


def _less_subject(scores: np.ndarray) -> np.ndarray:
    """Rows (parts) x documents, less a share of each document's mean over the rows: the
    question's subject stands near all of them."""
    return (
        scores - SUBJECT_WEIGHT * scores.mean(axis=0, keepdims=True) if len(scores) > 1 else scores
    )


def choose_documents(
    parts: list[str],
    queries: list[list[str]],
    chunks: list[Chunk],
    embedder: Embedder,
    leads: list[list[Document]] | None = None,
) -> list[list[Document]]:
    """For each part, the documents that answer it, the one that answers it most directly
    first: the best-scored (document_scores), and those within MARGIN of it, at most
    MOST_DOCUMENTS; the best for each thing a part lists (part_items) after the first; by
    date where the part asks for the first or the latest."""
    cards = cards_of(chunks)
    if not parts or not cards:
        return [[] for _ in parts]
    leads = leads or [[] for _ in parts]
    items = [part_items(part) for part in parts]
    # The parts and each thing a part lists scored in one pass (one embedding of the cards);
    # the subject taken out among the parts, and among each part's listed things.
    listed = [[thing] for things in items for thing in things]
    listed_leads = [leads[n] for n, things in enumerate(items) for _ in things]
    rows = document_scores(
        [*queries, *listed], cards, embedder, [*leads, *listed_leads], less_subject=False
    )
    scores, start = _less_subject(rows[: len(parts)]), len(parts)
    chosen = []
    for n, part in enumerate(parts):
        order = list(np.argsort(-scores[n]))
        top = scores[n, order[0]]
        picked = [i for i in order[:MOST_DOCUMENTS] if scores[n, i] >= top - MARGIN]
        if items[n]:  # each thing it lists, the document best for it
            own = _less_subject(rows[start : start + len(items[n])])
            start += len(items[n])
            best = [order[0], *(int(i) for i in own.argmax(axis=1))]
            picked = list(dict.fromkeys([*best, *picked]))[: max(MOST_DOCUMENTS, len(best))]
        if dated := dated_as(part):
            near = [
                i for i in order if scores[n, i] >= top - DATED_MARGIN and cards[i].date[0] == 0
            ]
            if near:
                first = (min if dated == "first" else max)(near, key=lambda i: cards[i].date)
                picked = [first, *(i for i in picked if i != first)][:MOST_DOCUMENTS]
        chosen.append([cards[i].document for i in picked])
    return chosen


def _numbers_apart(text: str) -> str:
    """A year or a number joined to a word ("early-2018", "EIP-4844") apart from it: as one
    word, the stem keeps only its first letters. "peer-to-peer" stays one word (apart, its
    pieces are words every card holds)."""
    return re.sub(r"(?<=\d)[-_]|[-_](?=\d)", " ", text)


def dated_as(part: str) -> str:
    """ "first" or "latest" where the part asks for one by time, else ""."""
    if _FIRST.search(part):
        return "first"
    return "latest" if _LATEST.search(part) else ""
