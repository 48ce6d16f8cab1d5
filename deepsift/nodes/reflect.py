from typing import Literal

from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.types import Command
from pydantic import BaseModel

from deepsift.deps import Deps
from deepsift.graph import budget
from deepsift.graph.ranking import ranked
from deepsift.graph.sources import all_sources
from deepsift.graph.state import ResearchState
from deepsift.llm.models import similarities
from deepsift.llm.structured import ask_structured
from deepsift.prompts import reflect as prompt
from deepsift.report.excerpts import label, quoted
from deepsift.text.queries import clean_queries, with_new_terms

MAX_NEW_QUERIES = 3
EXCERPTS = 8
# What reflection reads of each top excerpt: on an endpoint the whole chunk (the name the next
# hop needs is often past a chunk's first lines), up to WHOLE_CHARS; on the embedded model, whose
# prompt reading (~40 tokens/s) is most of a reflection's 12-16 s, the first LOCAL_CHARS.
WHOLE_CHARS = 2000
LOCAL_CHARS = 240
SAME_QUERY_SIMILARITY = 0.9  # cosine above which a "new" query only rephrases an old one


class Reflection(BaseModel):
    queries: list[str]


def drop_rephrasings(new: list[str], searched: list[str], deps: Deps) -> list[str]:
    """Drop queries that re-ask a searched one in other words (small models often do):
    searching them again finds nothing new."""
    if not new:
        return new
    similarity = similarities(deps.embedder, new, searched)
    return [
        query
        for query, row in zip(new, similarity, strict=True)
        if row.max() < SAME_QUERY_SIMILARITY
    ]


def reflect(
    state: ResearchState, deps: Deps, finish: str = "synthesize"
) -> Command[Literal["route", "synthesize", "answer", "__end__"]]:
    """Ask what is still missing; loop back with new queries, or go on to `finish`."""
    max_iterations = state.get("max_iterations") or deps.settings.max_iterations
    sources = state.get("sources_to_search") or all_sources(deps)
    searched = len(state.get("sub_queries", []))
    room = budget.round_fits(state.get("usage"), searched, MAX_NEW_QUERIES, sources, deps.settings)
    if state["iteration"] >= max_iterations or not room:
        return Command(goto=finish)
    top = ranked(state)[:EXCERPTS]
    if {c.id for c in top} <= set(state.get("reflected_on", [])):
        # The last round put nothing new into the top excerpts: asking again would show the
        # model what it saw last time, for a call of tens of seconds on the embedded model.
        return Command(goto=finish)
    chars = LOCAL_CHARS if deps.settings.uses_local_llm else WHOLE_CHARS
    excerpts = "\n".join(f"- {label(c)}\n{quoted(' '.join(c.text.split())[:chars])}" for c in top)
    messages = [
        SystemMessage(prompt.SYSTEM.format(max_queries=MAX_NEW_QUERIES)),
        HumanMessage(
            prompt.USER.format(
                question=state["question"],
                searched="\n".join(f"- {q}" for q in state["sub_queries"]),
                excerpts=excerpts or "(nothing found)",
            )
        ),
    ]
    reply, usage = ask_structured(deps.llm, messages, Reflection, most={"queries": MAX_NEW_QUERIES})
    new = clean_queries(reply.queries if reply else [], MAX_NEW_QUERIES, state["sub_queries"])
    new = with_new_terms(new, [state["question"], *state["sub_queries"]])
    new = drop_rephrasings(new, [state["question"], *state["sub_queries"]], deps)
    if not new:
        return Command(goto=finish, update={"usage": usage})
    return Command(
        goto="route",
        update={
            "pending": new,
            "iteration": state["iteration"] + 1,
            "usage": usage,
            "reflected_on": [c.id for c in top],
        },
    )
