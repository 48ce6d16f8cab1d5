"""A run's thread: the store, models and checkpointer it is opened with, the graph of the
agent that made it, and the list of every run the data folder keeps."""

import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from datetime import datetime
from typing import Literal

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import StateSnapshot
from pydantic import BaseModel

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


class RunSummary(BaseModel):
    """One run of the data folder, as `deepsift runs` and the web app list it."""

    thread_id: str
    question: str
    started: datetime  # when its first step was saved, in UTC
    # done: it has its report (or answer); paused: it waits for its plan to be reviewed;
    # stopped: it stopped part way (a failed endpoint, ^C); `deepsift research --thread ID`
    # resumes the last two
    status: Literal["done", "paused", "stopped"]
    followups: int  # questions asked of it and rewrites of its report
    agent: str


def list_runs(settings: Settings) -> list[RunSummary]:
    """Every run saved in the data folder, newest first; reads the checkpoints only (neither
    the store nor a model), so it works beside another process that holds the store."""
    if not settings.checkpoint_path.exists():
        return []
    with SqliteSaver.from_conn_string(str(settings.checkpoint_path)) as saver:
        try:
            with closing(saver.conn.cursor()) as cursor:
                firsts = cursor.execute(
                    "SELECT thread_id, MIN(checkpoint_id) FROM checkpoints"
                    " WHERE checkpoint_ns = '' GROUP BY thread_id"
                ).fetchall()
        except sqlite3.OperationalError:  # a checkpoint file no run has written to yet
            return []
        graphs = {name: agent.build(None, saver) for name, agent in AGENTS.items()}
        runs = [_summary(saver, graphs, thread_id, first) for thread_id, first in firsts]
    return sorted(filter(None, runs), key=lambda run: run.started, reverse=True)


def _summary(
    saver: SqliteSaver, graphs: dict[str, CompiledStateGraph], thread_id: str, first: str
) -> RunSummary | None:
    """The run `thread_id` as it stands (its graph, drawn without a store or model, says what
    is left to do); None for a thread that holds no run."""
    thread = {"thread_id": thread_id, "checkpoint_ns": ""}
    start = saver.get_tuple({"configurable": {**thread, "checkpoint_id": first}})
    latest = saver.get_tuple({"configurable": thread})
    values = latest.checkpoint["channel_values"] if latest else {}
    agent = values.get("agent", "deepsift")
    if start is None or not values.get("question") or agent not in graphs:
        return None
    saved = graphs[agent].get_state({"configurable": {"thread_id": thread_id}})
    return RunSummary(
        thread_id=thread_id,
        question=values["question"],
        started=datetime.fromisoformat(start.checkpoint["ts"]),
        status="done" if not saved.next else "paused" if saved.interrupts else "stopped",
        followups=len(values.get("followups", [])),
        agent=agent,
    )
