from typing import Literal

from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.types import Command, Send
from pydantic import BaseModel

from deepsift.deps import Deps
from deepsift.prompts import route as prompt
from deepsift.sources import WEB, available_sources
from deepsift.state import ResearchState, Route, SearchTask, Usage
from deepsift.structured import ask_structured


class QueryRoute(BaseModel):
    query: int
    sources: list[str]


class Routing(BaseModel):
    routes: list[QueryRoute]


def plan_routes(
    queries: list[str], sources: dict[str, str], deps: Deps
) -> tuple[list[Route], Usage]:
    """The sources for each query, chosen by the model from their descriptions (every source
    when there is only one, or when the model picks none that exists)."""
    usage = Usage()
    chosen = {i: list(sources) for i in range(1, len(queries) + 1)}
    if len(sources) > 1:
        listing = "\n".join(
            f"- {name}: {text or '(no description)'}" for name, text in sources.items()
        )
        numbered = "\n".join(f"{i}. {q}" for i, q in enumerate(queries, 1))
        messages = [
            SystemMessage(prompt.SYSTEM.format(sources=listing)),
            HumanMessage(prompt.USER.format(queries=numbered)),
        ]
        reply, usage = ask_structured(deps.llm, messages, Routing)
        for item in reply.routes if reply else []:
            picked = [name for name in dict.fromkeys(item.sources) if name in sources]
            if item.query in chosen and picked:
                chosen[item.query] = picked
    return [Route(query=q, sources=chosen[i]) for i, q in enumerate(queries, 1)], usage


def question_searches(state: ResearchState, deps: Deps) -> list[Send]:
    """The first round also searches the question as asked, in every collection, as deep as
    one search alone would: the run's ranking then never loses what one search finds."""
    if state.get("iteration") != 1 or not deps.settings.search_question:
        return []
    k = deps.settings.question_depth
    return [
        Send("search", SearchTask(query=state["question"], source=name, k=k, of_question=True))
        for name in state["sources_to_search"]
        if name != WEB
    ]


def dispatch(
    routes: list[Route], usage: Usage, deps: Deps, also: list[Send] = ()
) -> Command[Literal["search"]]:
    """Record the round's queries and fan out one search per (query, source), plus `also`."""
    k = deps.settings.top_k
    sends = [
        Send("search", SearchTask(query=r.query, source=name, k=k, of_question=False))
        for r in routes
        for name in r.sources
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
    return dispatch(routes, usage, deps, question_searches(state, deps))
