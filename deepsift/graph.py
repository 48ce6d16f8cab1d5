"""build_graph: the research graph's wiring, nothing else.

decompose -> route -> search (one branch per sub-query x source) -> reflect -> route ... -> synthesize
"""

from functools import partial

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from deepsift.config import Settings
from deepsift.deps import Deps
from deepsift.nodes.decompose import decompose
from deepsift.nodes.reflect import reflect
from deepsift.nodes.route import route
from deepsift.nodes.search import search
from deepsift.nodes.synthesize import synthesize
from deepsift.state import ResearchState


def build_graph(
    settings: Settings | None = None,
    checkpointer: BaseCheckpointSaver | None = None,
    deps: Deps | None = None,
) -> CompiledStateGraph:
    deps = deps or Deps.from_settings(settings or Settings())
    graph = StateGraph(ResearchState)
    graph.add_node("decompose", partial(decompose, deps=deps))
    graph.add_node("route", partial(route, deps=deps), destinations=("search",))
    graph.add_node("search", partial(search, deps=deps))
    graph.add_node("reflect", partial(reflect, deps=deps), destinations=("route", "synthesize"))
    graph.add_node("synthesize", partial(synthesize, deps=deps))
    graph.add_edge(START, "decompose")
    graph.add_edge("decompose", "route")
    graph.add_edge("search", "reflect")
    graph.add_edge("synthesize", END)
    return graph.compile(checkpointer=checkpointer, name="deepsift")
