"""The research graph's state: what a run starts from, what its steps add, and the reducers
that merge what parallel branches add."""

import operator
from typing import (
    Annotated,
    Any,
    Required,  # pydantic needs these before 3.12
)

from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from typing_extensions import TypedDict

from deepsift.records import Chunk, FollowUp, Route, Source, StepCost, Usage
from deepsift.retrieval.ranking import merge_chunks


def add_usage(left: Usage | None, right: Usage | None) -> Usage:
    return (left or Usage()) + (right or Usage())


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
    sources_to_search: list[str]  # resolved by the graph on entry (deepsift.retrieval.sources)
    web: bool | None  # True once the run asked for the web (--web, or "web" named)
    report_length: str
    report_language: str
    sub_queries: Annotated[list[str], operator.add]  # every query searched, in order
    chunks: Annotated[dict[str, Chunk], merge_chunks]
    iteration: int  # rounds (deepsift) or searches (search-o1) done
    usage: Annotated[Usage, add_usage]
    notes: Annotated[list[str], operator.add]  # what failed along the way (web searches, pages)
    web_searches: Annotated[list[str], operator.add]  # each web search and what it returned
    answer: str  # a short answer (search-o1, and the graph's short-answer mode)
    report: str
    sources: list[Source]  # the documents the report cites
    # After the run: the questions asked of it and the report's new versions, in order
    # (deepsift.followups.questions), and the request being answered, until it is done.
    followups: Annotated[list[FollowUp], operator.add]
    asking: str


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
        records = [cls.__name__ for cls in (Chunk, Route, Source, Usage, StepCost, FollowUp)]
        # Runs saved before the records moved to deepsift.records name "deepsift.state".
        modules = ("deepsift.records", "deepsift.state")
        types = [(module, name) for module in modules for name in records]
        checkpointer.serde = JsonPlusSerializer(allowed_msgpack_modules=types)


class SearchTask(TypedDict):
    """What one search branch receives through Send."""

    query: str
    source: str  # a collection, or "web"
    k: int  # hits to keep
    of_question: bool  # the question itself, searched as asked
