from typing import Any, Literal

from langgraph.types import Command, interrupt

from deepsift.deps import Deps
from deepsift.errors import UserError
from deepsift.nodes.route import dispatch, question_searches
from deepsift.records import Usage
from deepsift.retrieval.sources import available_sources
from deepsift.run.state import ResearchState, Route


def edited_plan(answer: Any, sources: dict[str, str]) -> list[Route]:
    """The plan a reviewer sent back: [{"query", "sources"}, ...]; no sources means all."""
    if not isinstance(answer, list) or not answer:
        raise UserError("a reviewed plan must be a non-empty list of {query, sources}")
    routes = []
    for n, item in enumerate(answer, 1):
        item = item.model_dump() if isinstance(item, Route) else item
        query = str(item.get("query", "")).strip() if isinstance(item, dict) else ""
        if not query:
            raise UserError(f"reviewed plan item {n} has no query")
        picked = list(dict.fromkeys(item.get("sources") or sources))
        unknown = [name for name in picked if name not in sources]
        if unknown:
            raise UserError(
                f"reviewed plan item {n}: no source named {', '.join(unknown)}; "
                f"choose from {', '.join(sources)}"
            )
        routes.append(Route(query=query, sources=picked))
    return routes


def review(state: ResearchState, deps: Deps) -> Command[Literal["search"]]:
    """Pause with the planned searches; resume with the plan to run (None keeps it as is)."""
    sources = available_sources(state.get("sources_to_search"), deps)
    answer = interrupt(
        {
            "question": state["question"],
            "routes": [r.model_dump() for r in state["plan"]],
            "sources": sources,
        }
    )
    routes = state["plan"] if answer is None else edited_plan(answer, sources)
    return dispatch(state, routes, Usage(), deps, question_searches(state, deps))
