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


class Usage(BaseModel):
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def __add__(self, other: "Usage") -> "Usage":
        return Usage(
            llm_calls=self.llm_calls + other.llm_calls,
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
        )


def usage_of(reply: Any) -> Usage:
    """The cost of one chat completion, from the usage its endpoint reported."""
    meta = getattr(reply, "usage_metadata", None) or {}
    return Usage(
        llm_calls=1,
        prompt_tokens=meta.get("input_tokens", 0),
        completion_tokens=meta.get("output_tokens", 0),
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


def merge_chunks(left: dict[str, Chunk] | None, right: dict[str, Chunk] | None) -> dict[str, Chunk]:
    """De-duplicate by chunk id, keeping the best score any search gave the chunk."""
    merged = dict(left or {})
    for chunk_id, chunk in (right or {}).items():
        if chunk_id not in merged or chunk.score > merged[chunk_id].score:
            merged[chunk_id] = chunk
    return merged


def ranked(state: "RunState") -> list[Chunk]:
    """Every chunk the run gathered, best fused score first. RRF scores tie often (rank 1 of
    two searches scores the same); ties go to the chunk found by the earlier sub-query."""
    order = {query: n for n, query in enumerate(state.get("sub_queries", []))}
    return sorted(
        state.get("chunks", {}).values(),
        key=lambda c: (-c.score, order.get(c.query, len(order)), c.source, c.position),
    )


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
    web: bool | None  # force the web on or off; None: on when a Tavily key is set
    max_iterations: int
    review: bool


class RunState(TypedDict, total=False):
    """The state both agents' graphs share."""

    agent: str  # "deepsift" or "search-o1": which agent's graph a checkpointed thread belongs to
    question: str
    sources_to_search: list[str]  # resolved by the graph on entry (deepsift.sources)
    web: bool | None
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


def allow_state_types(checkpointer: Any) -> None:
    """Let a checkpointer restore the state's own record classes: LangGraph's default serializer
    warns on types it was not told about (and is to refuse them). A custom serializer is kept."""
    if (
        checkpointer is not None
        and type(getattr(checkpointer, "serde", None)) is JsonPlusSerializer
    ):
        types = [(cls.__module__, cls.__name__) for cls in (Chunk, Route, Source, Usage)]
        checkpointer.serde = JsonPlusSerializer(allowed_msgpack_modules=types)


class SearchTask(TypedDict):
    """What one search branch receives through Send."""

    query: str
    source: str  # a collection, or "web"
