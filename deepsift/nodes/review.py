"""The review step: the first round's planned searches wait for a person, who may edit them."""

from typing import Literal

from langgraph.types import Command, interrupt

from deepsift.deps import Deps
from deepsift.nodes.route import dispatch, question_searches
from deepsift.records import Usage
from deepsift.retrieval.routing import edited_plan
from deepsift.retrieval.sources import available_sources
from deepsift.run.state import ResearchState


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
