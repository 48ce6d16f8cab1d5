"""The route step: each pending query's sources, then the round's searches fanned out (the
first round's plan to a person first, with review on)."""

from typing import Literal

from langgraph.types import Command, Send

from deepsift.deps import Deps
from deepsift.records import Route, Usage
from deepsift.report.writing.length import shape_of
from deepsift.retrieval.routing import plan_routes
from deepsift.retrieval.search import question_sources, unsearched
from deepsift.retrieval.sources import available_sources
from deepsift.run.state import ResearchState, SearchTask


def question_searches(state: ResearchState, deps: Deps) -> list[Send]:
    """The first round also searches the question as asked (retrieval.search.question_sources),
    as deep as one search alone would."""
    if state.get("iteration") != 1:
        return []
    names = question_sources(state["sources_to_search"], state.get("web"), deps)
    k = deps.settings.question_depth
    return [
        Send("search", SearchTask(query=state["question"], source=name, k=k, of_question=True))
        for name in names
    ]


def dispatch(
    state: ResearchState, routes: list[Route], usage: Usage, deps: Deps, also: list[Send] = ()
) -> Command[Literal["search"]]:
    """Record the round's queries and fan out one search per (query, source), as deep as the
    report's shape asks, plus `also`."""
    k = deps.settings.top_k * shape_of(state, deps.settings.report_length).depth
    searched = [(send.arg["query"], send.arg["source"]) for send in also]
    sends = [
        Send("search", SearchTask(query=query, source=name, k=k, of_question=False))
        for query, name in unsearched(routes, searched)
    ] + list(also)
    queries = [r.query for r in routes]
    update = {"routes": routes, "pending": queries, "sub_queries": queries, "usage": usage}
    return Command(goto=sends, update=update)


def route(state: ResearchState, deps: Deps) -> Command[Literal["search", "review"]]:
    """Pick the sources for each pending query, then fan out the searches; with `review` on,
    the first round's plan goes to a person first."""
    routes, usage = plan_routes(
        state["pending"], available_sources(state.get("sources_to_search"), deps), deps
    )
    if state.get("review") and state.get("iteration") == 1:
        return Command(goto="review", update={"plan": routes, "usage": usage})
    return dispatch(state, routes, usage, deps, question_searches(state, deps))
