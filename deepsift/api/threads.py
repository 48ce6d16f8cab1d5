"""A run's thread: the store, models and checkpointer it is opened with, and the graph of the
agent that made it."""

from collections.abc import Iterator
from contextlib import contextmanager

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import StateSnapshot

from deepsift.agents import AGENTS
from deepsift.agents import agent as agent_named
from deepsift.config import Settings
from deepsift.deps import Deps


@contextmanager
def resources(
    settings: Settings, deps: Deps | None, on_disk: bool
) -> Iterator[tuple[Deps, BaseCheckpointSaver]]:
    """The run's store, models and checkpointer; a store opened here is closed here."""
    own = deps is None
    deps = deps or Deps.from_settings(settings)
    try:
        with checkpointer(settings, on_disk) as saver:
            yield deps, saver
    finally:
        if own:
            deps.store.close()


def saved_thread(
    agent: str, deps: Deps, saver: BaseCheckpointSaver, thread_id: str
) -> tuple[str, CompiledStateGraph, StateSnapshot]:
    """The graph for this thread and what it saved so far; a saved thread keeps its own agent."""
    config = {"configurable": {"thread_id": thread_id}}
    graph = AGENTS[agent].build(deps, saver)
    saved = graph.get_state(config)
    if saved.values and saved.values.get("agent", "deepsift") != agent:
        agent = saved.values.get("agent", "deepsift")
        graph = agent_named(agent).build(deps, saver)
        saved = graph.get_state(config)
    return agent, graph, saved


@contextmanager
def checkpointer(settings: Settings, on_disk: bool) -> Iterator[BaseCheckpointSaver]:
    if not on_disk:
        yield InMemorySaver()
        return
    with SqliteSaver.from_conn_string(str(settings.checkpoint_path)) as saver:
        yield saver
