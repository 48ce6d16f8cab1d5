from typing import Literal

from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.types import Command, Send
from pydantic import BaseModel

from deepsift.deps import Deps
from deepsift.prompts import route as prompt
from deepsift.state import ResearchState, Route, SearchTask, Usage
from deepsift.structured import ask_structured


class QueryRoute(BaseModel):
    query: int
    sources: list[str]


class Routing(BaseModel):
    routes: list[QueryRoute]


def available_sources(state: ResearchState, deps: Deps) -> dict[str, str]:
    """Name -> description of every source this run may search."""
    allowed = state.get("collections") or deps.store.names()
    return {name: deps.store.description(name) for name in allowed}


def route(state: ResearchState, deps: Deps) -> Command[Literal["search"]]:
    """Pick the sources for each pending query by their descriptions, then fan out the searches."""
    sources = available_sources(state, deps)
    queries = state["pending"]
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
    routes = [Route(query=q, sources=chosen[i]) for i, q in enumerate(queries, 1)]
    sends = [
        Send("search", SearchTask(query=r.query, collection=name))
        for r in routes
        for name in r.sources
    ]
    return Command(goto=sends, update={"routes": routes, "usage": usage})
