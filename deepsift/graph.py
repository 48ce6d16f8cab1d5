"""build_graph: the research graph's wiring, nothing else.

decompose -> route [-> review] -> search (one branch per sub-query x source) -> hop -> reflect
-> route ...
-> synthesize (a cited report), or answer (a short answer), or nothing (retrieval only)
"""

from typing import Literal

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from deepsift.config import Settings
from deepsift.deps import Deps
from deepsift.nodes.answer import answer
from deepsift.nodes.decompose import decompose
from deepsift.nodes.hop import hop
from deepsift.nodes.reflect import reflect
from deepsift.nodes.review import review
from deepsift.nodes.route import route
from deepsift.nodes.search import search
from deepsift.nodes.synthesize import synthesize
from deepsift.react import build_react
from deepsift.search_o1 import build_search_o1
from deepsift.state import ResearchInput, ResearchState, allow_state_types
from deepsift.steps import step


def recursion_limit(agent: str, bound: int) -> int:
    """LangGraph's step limit for a run bounded at `bound` rounds (deepsift), searches
    (search-o1) or actions (react): a safety net above what the bound allows, never the bound."""
    if agent == "search-o1":
        return 14 + 4 * bound  # two steps per search, and spares
    if agent == "react":
        return 12 + 2 * bound  # two steps per action, then the vote and the report, and spares
    return 10 + 4 * bound  # each round is 3-4 steps


def build_agent(
    agent: str, deps: Deps, checkpointer: BaseCheckpointSaver | None = None
) -> CompiledStateGraph:
    """The graph of `agent` (one of AGENTS), writing its report."""
    if agent == "search-o1":
        return build_search_o1(deps, checkpointer)
    if agent == "react":
        return build_react(deps, checkpointer)
    return build_graph(checkpointer=checkpointer, deps=deps)


def build_graph(
    settings: Settings | None = None,
    checkpointer: BaseCheckpointSaver | None = None,
    deps: Deps | None = None,
    finish: Literal["report", "answer", "retrieval"] = "report",
    context_schema: type | None = None,
) -> CompiledStateGraph:
    """The research graph; `finish` picks its last step: a cited report, a short answer, or none
    (retrieval only, for evaluating search)."""
    deps = deps or Deps.from_settings(settings or Settings())
    allow_state_types(checkpointer)
    graph = _wire(deps, finish, context_schema).compile(checkpointer=checkpointer, name="deepsift")
    # Runs that set their own max_iterations (api, eval) pass their own limit.
    return graph.with_config(
        recursion_limit=recursion_limit("deepsift", deps.settings.max_iterations)
    )


def mermaid(agent: str = "deepsift") -> str:
    """The graph of `agent` as a Mermaid diagram (drawing it needs no store or model)."""
    if agent == "deepsift":
        return _wire(None, "report").compile(name="deepsift").get_graph().draw_mermaid()
    return build_agent(agent, None).get_graph().draw_mermaid()


def _wire(deps: Deps | None, finish: str, context_schema: type | None = None) -> StateGraph:
    last = {"report": "synthesize", "answer": "answer", "retrieval": END}[finish]
    graph = StateGraph(ResearchState, context_schema=context_schema, input_schema=ResearchInput)
    graph.add_node("decompose", step("decompose", decompose, deps=deps))
    graph.add_node("route", step("route", route, deps=deps), destinations=("search", "review"))
    graph.add_node("review", step("review", review, deps=deps), destinations=("search",))
    graph.add_node("search", step("search", search, deps=deps))
    graph.add_node("hop", step("hop", hop, deps=deps))
    graph.add_node(
        "reflect", step("reflect", reflect, deps=deps, finish=last), destinations=("route", last)
    )
    graph.add_edge(START, "decompose")
    graph.add_edge("decompose", "route")
    graph.add_edge("search", "hop")
    graph.add_edge("hop", "reflect")
    if last != END:
        finisher = {"synthesize": synthesize, "answer": answer}[last]
        graph.add_node(last, step(last, finisher, deps=deps))
        graph.add_edge(last, END)
    return graph
