"""The research graph's state, the records it carries, and their reducers."""

import operator
from typing import (
    Annotated,
    Any,
    Required,  # pydantic needs these before 3.12
)

from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from pydantic import BaseModel
from typing_extensions import TypedDict


class StepCost(BaseModel):
    """What one graph step spent over a run; `seconds` adds up its parallel branches."""

    seconds: float = 0.0
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def __add__(self, other: "StepCost") -> "StepCost":
        return StepCost(
            seconds=round(self.seconds + other.seconds, 3),
            llm_calls=self.llm_calls + other.llm_calls,
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
        )


class Usage(BaseModel):
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0  # of the prompt tokens, those the server reused from its prompt cache
    claims_checked: int = 0  # report sentences stating numbers or names (deepsift.claims)
    claims_rewritten: int = 0  # of those, failed the check and passed once rewritten
    claims_dropped: int = 0  # failed it again, or could not be rewritten: left out
    steps: dict[str, StepCost] = {}  # by graph step (deepsift.steps.timed); adds up to the totals

    def __add__(self, other: "Usage") -> "Usage":
        steps = dict(self.steps)
        for name, cost in other.steps.items():
            steps[name] = steps[name] + cost if name in steps else cost
        return Usage(
            llm_calls=self.llm_calls + other.llm_calls,
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            cached_tokens=self.cached_tokens + other.cached_tokens,
            claims_checked=self.claims_checked + other.claims_checked,
            claims_rewritten=self.claims_rewritten + other.claims_rewritten,
            claims_dropped=self.claims_dropped + other.claims_dropped,
            steps=steps,
        )


def usage_of(reply: Any) -> Usage:
    """The cost of one chat completion, from the usage its endpoint reported."""
    meta = getattr(reply, "usage_metadata", None) or {}
    return Usage(
        llm_calls=1,
        prompt_tokens=meta.get("input_tokens", 0),
        completion_tokens=meta.get("output_tokens", 0),
        cached_tokens=(meta.get("input_token_details") or {}).get("cache_read", 0),
    )


def add_usage(left: Usage | None, right: Usage | None) -> Usage:
    return (left or Usage()) + (right or Usage())


class Chunk(BaseModel):
    """A retrieved passage, with where it came from and how well it matched."""

    id: str
    text: str
    source: str
    title: str
    collection: str
    position: int = 0
    score: float = 0.0
    query: str = ""
    published: str = ""  # web pages: the date the page gives, when it gives one
    fused: float = 0.0  # the run's fusion: 1/(RRF_K + rank) summed over the lists that found it
    question_rank: int | None = None  # its rank in the search of the question itself, if any
    link_rank: int | None = None  # the page of a name the hop followed: the order it was found
    found_by: list[str] = []  # every query whose search returned it, after `query` (merge_chunks)

    @property
    def queries(self) -> list[str]:
        """The queries whose searches returned it, the best-scoring one first."""
        return list(dict.fromkeys([self.query, *self.found_by]))


RRF_K = 60
# The question's own best hits keep the lead: on public 2WikiMultiHopQA, fusion alone put other
# queries' hits above them and lost 5 points of recall@2 against one search.
QUESTION_LEAD = 2
# Then the pages of the names the LLM-free hop followed (deepsift.bridge), at most this many:
# placed there rather than fused, they raised recall@5 on public 2WikiMultiHopQA, HotpotQA and
# MuSiQue; placing more pushed the question's own third to fifth hits down and lost recall on
# HotpotQA and MuSiQue (benchmarks/multihop.md).
LINK_LEAD = 2
# The first this many places go to distinct documents; a document's further chunks follow them.
# A second chunk of a document already placed adds less than another document's best: on the
# public MuSiQue questions, several of whose paragraphs share a title, it raised recall@5 by
# half a point; 0.2 on 2WikiMultiHopQA, none on HotpotQA.
DISTINCT_LEAD = 10
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


def in_lead(chunk: Chunk) -> bool:
    """Whether the chunk is one of the question's own top QUESTION_LEAD hits."""
    return chunk.question_rank is not None and chunk.question_rank <= QUESTION_LEAD


def ranked(state: "RunState") -> list[Chunk]:
    """Every chunk the run gathered: the question's own top QUESTION_LEAD hits, then the first
    LINK_LEAD pages of names the hop followed, then the rest by fused score (reciprocal ranks
    summed over every result list of the run, so a chunk that several queries found rises).
    Ties go to the chunk found by the earlier sub-query. The first DISTINCT_LEAD places hold one
    chunk a document."""
    order = {query: n for n, query in enumerate(state.get("sub_queries", []))}

    def key(c: Chunk) -> tuple:
        lead = c.question_rank if in_lead(c) else 99
        return (lead, -c.fused, -c.score, order.get(c.query, len(order)), c.source, c.position)

    fused = sorted(state.get("chunks", {}).values(), key=key)
    lead = [c for c in fused if in_lead(c)]
    linked = sorted(
        (c for c in fused[len(lead) :] if c.link_rank is not None), key=lambda c: c.link_rank
    )[:LINK_LEAD]
    placed = {c.id for c in linked}
    rest = [c for c in fused[len(lead) :] if c.id not in placed]
    return _documents_first(lead + linked + rest, DISTINCT_LEAD)


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


class Route(BaseModel):
    query: str
    sources: list[str]


class Source(BaseModel):
    """One cited document: its number in the report and the retrieved chunks cited from it."""

    n: int
    title: str
    source: str
    chunk_ids: list[str]


class ResearchInput(TypedDict, total=False):
    """What a run starts from; only the question is required."""

    agent: str
    question: Required[str]
    sources_to_search: list[str]  # collections, "web" among them; empty: every collection
    web: bool | None  # force the web on or off; None: on when a web backend is set up
    max_iterations: int
    review: bool
    report_length: str  # brief, standard or long; default: the report_length setting
    report_language: str  # default: the report_language setting ("": the question's)


class RunState(TypedDict, total=False):
    """The state both agents' graphs share."""

    agent: str  # "deepsift" or "search-o1": which agent's graph a checkpointed thread belongs to
    question: str
    sources_to_search: list[str]  # resolved by the graph on entry (deepsift.sources)
    web: bool | None
    report_length: str
    report_language: str
    sub_queries: Annotated[list[str], operator.add]  # every query searched, in order
    chunks: Annotated[dict[str, Chunk], merge_chunks]
    iteration: int  # rounds (deepsift) or searches (search-o1) done
    usage: Annotated[Usage, add_usage]
    notes: Annotated[list[str], operator.add]  # what failed along the way (web searches, pages)
    answer: str  # a short answer (search-o1, and the graph's short-answer mode)
    report: str
    sources: list[Source]  # the documents the report cites


class ResearchState(RunState, total=False):
    max_iterations: int
    review: bool  # pause after the first routing for a person to edit the plan
    pending: list[str]  # the sub-queries of the current round
    plan: list[Route]  # the first round's routes, while they wait for review
    routes: Annotated[list[Route], operator.add]
    hopped: Annotated[list[str], operator.add]  # chunk ids the LLM-free hop has followed
    reflected_on: list[str]  # the chunk ids the last reflection was shown


def allow_state_types(checkpointer: Any) -> None:
    """Let a checkpointer restore the state's own record classes: LangGraph's default serializer
    warns on types it was not told about (and is to refuse them). A custom serializer is kept."""
    if (
        checkpointer is not None
        and type(getattr(checkpointer, "serde", None)) is JsonPlusSerializer
    ):
        types = [(cls.__module__, cls.__name__) for cls in (Chunk, Route, Source, Usage, StepCost)]
        checkpointer.serde = JsonPlusSerializer(allowed_msgpack_modules=types)


class SearchTask(TypedDict):
    """What one search branch receives through Send."""

    query: str
    source: str  # a collection, or "web"
    k: int  # hits to keep
    of_question: bool  # the question itself, searched as asked
