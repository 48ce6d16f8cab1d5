from typing import Literal

import numpy as np
from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.types import Command
from pydantic import BaseModel

from deepsift.deps import Deps
from deepsift.nodes.queries import clean_queries
from deepsift.nodes.route import all_sources
from deepsift.nodes.synthesize import MAX_SECTIONS
from deepsift.prompts import reflect as prompt
from deepsift.prompts.excerpts import label, quoted
from deepsift.state import ResearchState, ranked
from deepsift.structured import ask_structured
from deepsift.web.source import WEB

MAX_NEW_QUERIES = 3
EXCERPTS = 8
EXCERPT_CHARS = 240
SAME_QUERY_SIMILARITY = 0.9  # cosine above which a "new" query only rephrases an old one


class Reflection(BaseModel):
    queries: list[str]


def within_budget(state: ResearchState, deps: Deps) -> bool:
    """True while one more round still leaves room, in LLM calls, for the report after it.

    A round costs a reflection and a routing call and may add MAX_NEW_QUERIES sub-queries, each
    rephrased once if it goes to the web; the report then writes a section per sub-query (at most
    MAX_SECTIONS) and a conclusion.
    """
    usage = state.get("usage")
    if usage is None:
        return True
    queries_after = len(state.get("sub_queries", [])) + MAX_NEW_QUERIES
    web = WEB in (state.get("collections") or all_sources(deps)) and deps.settings.web_rephrasings
    rephrasings = MAX_NEW_QUERIES if web else 0
    calls_after = usage.llm_calls + 2 + rephrasings + min(queries_after, MAX_SECTIONS) + 1
    tokens = usage.prompt_tokens + usage.completion_tokens
    return calls_after <= deps.settings.max_llm_calls and tokens < deps.settings.max_tokens


def drop_rephrasings(new: list[str], searched: list[str], deps: Deps) -> list[str]:
    """Drop queries that re-ask a searched one in other words (small models often do):
    searching them again finds nothing new."""
    if not new:
        return new
    vectors = np.array(deps.embedder.embed(new + searched))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True).clip(1e-12)
    similarity = vectors[: len(new)] @ vectors[len(new) :].T
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
    if state["iteration"] >= max_iterations or not within_budget(state, deps):
        return Command(goto=finish)
    excerpts = "\n".join(
        f"- {label(c)}\n{quoted(' '.join(c.text.split())[:EXCERPT_CHARS])}"
        for c in ranked(state)[:EXCERPTS]
    )
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
    reply, usage = ask_structured(deps.llm, messages, Reflection)
    new = clean_queries(reply.queries if reply else [], MAX_NEW_QUERIES, state["sub_queries"])
    new = drop_rephrasings(new, state["sub_queries"], deps)
    if not new:
        return Command(goto=finish, update={"usage": usage})
    return Command(
        goto="route",
        update={
            "pending": new,
            "iteration": state["iteration"] + 1,
            "usage": usage,
        },
    )
