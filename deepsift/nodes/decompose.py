"""The decompose step: the question split into sub-queries, the run's sources checked first."""

import logging

from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel

from deepsift.deps import Deps
from deepsift.llm.structured import ask_structured
from deepsift.prompts import decompose as prompt
from deepsift.retrieval.sources import asked_for_web, resolve_sources
from deepsift.run.state import ResearchState
from deepsift.text.queries import clean_queries, without_invented_numbers

log = logging.getLogger(__name__)


class SubQueries(BaseModel):
    queries: list[str]


def decompose(state: ResearchState, deps: Deps) -> dict:
    """Split the question into at most `max_sub_queries` search queries. As the graph's first
    step it also checks the run's sources, before any LLM call."""
    named = state.get("sources_to_search")
    sources = resolve_sources(deps, named, state.get("web"))
    limit = deps.settings.max_sub_queries
    messages = [
        SystemMessage(prompt.SYSTEM.format(max_sub_queries=limit)),
        HumanMessage(prompt.USER.format(question=state["question"])),
    ]
    # Bounded in the schema too: the embedded model otherwise lists "rfc 2014", "rfc 2015", ...
    # until max_tokens, twice (8 of the 60 RFC questions took 60 s each).
    reply, usage = ask_structured(deps.llm, messages, SubQueries, most={"queries": limit})
    proposed = clean_queries(reply.queries if reply else [], limit)
    # Struck of their numbers, "rfc 3771 demoted tier 1 target" and "rfc 2837 ..." are one query.
    queries = clean_queries(without_invented_numbers(proposed, state["question"]), limit)
    if not queries:
        log.warning("decompose produced no queries; searching the question itself")
        queries = [state["question"]]
    update = {"sources_to_search": sources, "pending": queries, "iteration": 1, "usage": usage}
    return update | ({"web": True} if asked_for_web(named, state.get("web"), sources) else {})
