"""The research graph of the default agent (deepsift): its wiring, nothing else. The nodes are
in deepsift.nodes, what they share in deepsift.run, the search in deepsift.retrieval.

decompose -> route [-> review] -> search (one branch per sub-query x source) -> hop -> reflect
-> route ...
-> synthesize (a cited report), or answer (a short answer), or nothing (retrieval only)
"""

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from deepsift.agents import AGENTS, Finish
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
from deepsift.run.state import ResearchInput, ResearchState, allow_state_types
from deepsift.run.steps import step


def build(
    deps: Deps | None, checkpointer: BaseCheckpointSaver | None = None, finish: Finish = "report"
) -> CompiledStateGraph:
    """The research graph as the agents' registry builds it; without deps, only to draw it or
    to read a saved run's state."""
    if deps is None:
        allow_state_types(checkpointer)
        return _wire(None, finish).compile(checkpointer=checkpointer, name="deepsift")
    return build_graph(checkpointer=checkpointer, deps=deps, finish=finish)


def build_graph(
    settings: Settings | None = None,
    checkpointer: BaseCheckpointSaver | None = None,
    deps: Deps | None = None,
    finish: Finish = "report",
    context_schema: type | None = None,
) -> CompiledStateGraph:
    """The research graph; `finish` picks its last step: a cited report, a short answer, or none
    (retrieval only, for evaluating search)."""
    deps = deps or Deps.from_settings(settings or Settings())
    allow_state_types(checkpointer)
    graph = _wire(deps, finish, context_schema).compile(checkpointer=checkpointer, name="deepsift")
    # Runs that set their own max_iterations (api, eval) pass their own limit.
    return graph.with_config(
        recursion_limit=AGENTS["deepsift"].step_limit(deps.settings.max_iterations)
    )


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
