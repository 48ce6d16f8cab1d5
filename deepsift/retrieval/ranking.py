"""The run's ranking: every result list fused by reciprocal rank, the question's own best hits
and the hop's pages in the lead, and the first places held by distinct documents."""

from collections.abc import Iterable, Mapping
from typing import Any

from deepsift.records import Chunk

RRF_K = 60
# The question's own best documents keep the lead: on public 2WikiMultiHopQA, fusion alone put
# other queries' hits above them and lost 5 points of recall@2 against one search. Counted in
# documents, not chunks: a long document often holds the question's two best chunks, and the
# second document then fell below the hop's pages (RFC folder: recall@2 .751, one search .768).
QUESTION_LEAD = 2
# Then the pages of the names the LLM-free hop followed (retrieval.bridge), at most this many:
# placed there rather than fused, they raised recall@5 on public 2WikiMultiHopQA, HotpotQA and
# MuSiQue; placing more pushed the question's own third to fifth hits down and lost recall on
# HotpotQA and MuSiQue (benchmarks/multihop.md).
LINK_LEAD = 2
# The first this many places go to distinct documents; a document's further chunks follow them.
# A second chunk of a document already placed adds less than another document's best: on the
# public MuSiQue questions, several of whose paragraphs share a title, it raised recall@5 by
# half a point; 0.2 on 2WikiMultiHopQA, none on HotpotQA.
DISTINCT_LEAD = 10
# The question's own search ranks as many documents as one search would: a long document holds
# many of the best chunks, so it searches this many times deeper in chunks. On the RFC folder
# it raised the first round's all@10 by documents from .900 to .950; on the Wikipedia-shaped
# sets (a document, a paragraph or a few) it moved all@10 by two points at most, either way
# (benchmarks/folders.md).
DOCUMENT_SPREAD = 10
# How much a decomposed sub-query's list counts in the fusion, against 1 for the question's own
# search and the hop's: measured on public 2WikiMultiHopQA and MuSiQue (benchmarks/ablation.py).
SUB_QUERY_WEIGHT = 0.5


def result_list(
    hits: list[Chunk], of_question: bool = False, weight: float = 1.0
) -> dict[str, Chunk]:
    """One search's hits, best first, as a state update carrying their share of the fusion."""
    return {
        chunk.id: chunk.model_copy(
            update={
                "fused": weight / (RRF_K + rank),
                "question_rank": rank if of_question else None,
            }
        )
        for rank, chunk in enumerate(hits, 1)
    }


def first_documents(hits: list[Chunk], documents: int) -> list[Chunk]:
    """`hits` (best first) from the first `documents` documents they come from."""
    seen: set[tuple[str, str]] = set()
    kept = []
    for chunk in hits:
        document = (chunk.collection, chunk.source)
        if document not in seen and len(seen) == documents:
            continue
        seen.add(document)
        kept.append(chunk)
    return kept


def merge_chunks(left: dict[str, Chunk] | None, right: dict[str, Chunk] | None) -> dict[str, Chunk]:
    """De-duplicate by chunk id: the record of the best-scoring search, with the fusion of
    every list that found the chunk added up and the queries of those lists kept."""
    merged = dict(left or {})
    for chunk_id, chunk in (right or {}).items():
        known = merged.get(chunk_id)
        if known is None:
            merged[chunk_id] = chunk
            continue
        best = chunk if chunk.score > known.score else known
        merged[chunk_id] = best.model_copy(
            update={
                "found_by": [
                    q for q in dict.fromkeys(known.queries + chunk.queries) if q != best.query
                ],
                "fused": known.fused + chunk.fused,
                "question_rank": _first(known.question_rank, chunk.question_rank),
                "link_rank": _first(known.link_rank, chunk.link_rank),
            }
        )
    return merged


def _first(*ranks: int | None) -> int | None:
    return min((r for r in ranks if r is not None), default=None)


def question_best(chunks: Iterable[Chunk]) -> list[Chunk]:
    """The question's own QUESTION_LEAD best chunks, best first: what the hop reads first. (Read
    from the best chunk of each lead document instead, the RFC folder's recall@5 fell .947 ->
    .942: a long document's second-best chunk is nearer the question than another's best.)"""
    own = [c for c in chunks if c.question_rank is not None and c.question_rank <= QUESTION_LEAD]
    return sorted(own, key=lambda c: c.question_rank)


def question_lead(chunks: Iterable[Chunk]) -> list[Chunk]:
    """The best chunk of each of the first QUESTION_LEAD documents the question's own search
    ranked, best first."""
    own = sorted((c for c in chunks if c.question_rank is not None), key=lambda c: c.question_rank)
    lead: dict[tuple[str, str], Chunk] = {}
    for chunk in own:
        if len(lead) == QUESTION_LEAD:
            break
        lead.setdefault((chunk.collection, chunk.source), chunk)
    return list(lead.values())


def ranked(state: Mapping[str, Any]) -> list[Chunk]:
    """Every chunk the run gathered: the question's own QUESTION_LEAD best documents, then the
    first LINK_LEAD pages the hop linked, then the rest by fused score (reciprocal ranks summed
    over every result list of the run, so a chunk that several queries found rises). Ties go to
    the chunk found by the earlier sub-query. The first DISTINCT_LEAD places hold one chunk a
    document."""
    order = {query: n for n, query in enumerate(state.get("sub_queries", []))}

    def key(c: Chunk) -> tuple:
        return (-c.fused, -c.score, order.get(c.query, len(order)), c.source, c.position)

    chunks = state.get("chunks", {}).values()
    lead = question_lead(chunks)
    placed = {c.id for c in lead}
    fused = sorted((c for c in chunks if c.id not in placed), key=key)
    linked = sorted((c for c in fused if c.link_rank is not None), key=lambda c: c.link_rank)
    placed |= {c.id for c in linked[:LINK_LEAD]}
    rest = [c for c in fused if c.id not in placed]
    return _documents_first(lead + linked[:LINK_LEAD] + rest, DISTINCT_LEAD)


def _documents_first(order: list[Chunk], depth: int) -> list[Chunk]:
    """`order` with its first `depth` places taken by distinct documents, where it has that
    many; the chunks that would repeat a document there come right after them."""
    first: list[Chunk] = []
    later: list[Chunk] = []
    documents: set[tuple[str, str]] = set()
    for chunk in order:
        document = (chunk.collection, chunk.source)
        if len(first) < depth and document in documents:
            later.append(chunk)
        else:
            first.append(chunk)
            documents.add(document)
    return first[:depth] + later + first[depth:]
