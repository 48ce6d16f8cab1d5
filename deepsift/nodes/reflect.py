"""The reflect step: what is still missing, as new queries for another round, or on to the
run's last step."""

from typing import Literal

from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.types import Command
from pydantic import BaseModel

from deepsift.deps import Deps
from deepsift.llm.structured import ask_structured
from deepsift.prompts import reflect as prompt
from deepsift.report.writing.excerpts import label, quoted
from deepsift.retrieval.queries import drop_rephrasings
from deepsift.retrieval.ranking import ranked
from deepsift.retrieval.sources import all_sources
from deepsift.run import budget
from deepsift.run.state import ResearchState
from deepsift.text.queries import clean_queries, with_new_terms

MAX_NEW_QUERIES = 3
EXCERPTS = 8
# What reflection reads of each top excerpt: on an endpoint the whole chunk (the name the next
# hop needs is often past a chunk's first lines), up to WHOLE_CHARS; on the embedded model, whose
# prompt reading (~40 tokens/s) is most of a reflection's 12-16 s, the first LOCAL_CHARS.
WHOLE_CHARS = 2000
LOCAL_CHARS = 240


class Reflection(BaseModel):
    queries: list[str]


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
