"""research(): run the graph once, with a checkpointer, and return the report and its costs."""

import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Literal

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command, StateSnapshot
from pydantic import BaseModel

from deepsift.config import Settings
from deepsift.deps import Deps
from deepsift.errors import UserError
from deepsift.graph import build_graph
from deepsift.search_o1 import build_search_o1
from deepsift.state import Usage
from deepsift.store import StoreError
from deepsift.web.source import WEB


class RunUsage(Usage):
    seconds: float = 0.0


class CitedSource(BaseModel):
    n: int
    title: str
    source: str


class ResearchResult(BaseModel):
    agent: str
    status: Literal["done", "paused"]  # paused: waiting for review; resume with its thread_id
    question: str
    answer: str  # search-o1: the short answer its reasoning ended with; deepsift: ""
    report: str
    sources: list[CitedSource]
    sub_queries: list[str]
    iterations: int
    usage: RunUsage
    notes: list[str]  # sources that failed (web searches, pages); the report lists them too
    thread_id: str


AGENTS = ("deepsift", "search-o1")

UpdateHandler = Callable[[str, dict[str, Any]], None]
# Given the review payload ({"question", "routes", "sources"}), the plan to run: the routes as
# they are or edited, or None to leave the run paused (resume later by thread id).
Reviewer = Callable[[dict[str, Any]], list[dict[str, Any]] | None]


def resolve_sources(deps: Deps, collections: list[str] | None, web: bool | None) -> list[str]:
    """The sources a run searches: the named collections (every one by default), plus the web
    when a Tavily key is set, unless `web` forces it on or off. Fails before any LLM call when
    there is nothing (valid) to search."""
    names = deps.store.names()
    if web is None:
        web = WEB in collections if collections else deps.web is not None
    if web and not deps.web:
        raise UserError(
            "the web source needs a Tavily API key: set DEEPSIFT_TAVILY_API_KEY (or TAVILY_API_KEY)"
        )
    sources = [name for name in dict.fromkeys(collections or names) if name != WEB]
    sources += [WEB] if web else []
    if not sources:
        raise StoreError(
            "there are no collections yet: ingest documents first "
            "(deepsift ingest PATH --collection NAME), or search the web (--web)"
        )
    for name in sources:
        if name == WEB:
            continue
        if name not in names:
            existing = ", ".join(names) or "none"
            raise StoreError(f"no collection named {name!r}; existing: {existing}")
        deps.store.check_embedder(name, deps.embedder)
    return sources


def research(
    question: str = "",
    settings: Settings | None = None,
    *,
    agent: str = "deepsift",
    collections: list[str] | None = None,
    max_iterations: int | None = None,
    max_searches: int | None = None,
    thread_id: str | None = None,
    on_update: UpdateHandler | None = None,
    web: bool | None = None,
    review: bool = False,
    reviewer: Reviewer | None = None,
    deps: Deps | None = None,
    checkpoints: bool = True,
) -> ResearchResult:
    """Answer `question` with a cited report; with `thread_id`, resume or reread that run.

    `agent` is "deepsift" (decompose, route, search, reflect, synthesize; bounded by
    `max_iterations`) or "search-o1" (searches mid-reasoning; bounded by `max_searches`).
    `collections` (names, "web" among them) limit the sources; by default every collection is
    searched, and the web too when a Tavily key is set. `web` forces the web on or off.

    With `review` (deepsift only), the run pauses after planning its first searches and
    `reviewer` decides the plan; without a reviewer (or when it returns None) the result is
    "paused" until resumed. `checkpoints=False` keeps the run in memory only (batch runs)."""
    if agent not in AGENTS:
        raise UserError(f"unknown agent {agent!r}; choose from {', '.join(AGENTS)}")
    if review and agent != "deepsift":
        raise UserError("--review works with the deepsift agent only")
    settings = settings or Settings()
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    own_deps = deps is None
    deps = deps or Deps.from_settings(settings)
    started = time.monotonic()
    thread_id_given = thread_id is not None
    thread_id = thread_id or uuid.uuid4().hex[:12]
    config: dict = {"configurable": {"thread_id": thread_id}}
    try:
        with _checkpointer(settings, checkpoints) as saver:
            graph = _graph(agent, deps, saver)
            saved = graph.get_state(config)
            if saved.values and saved.values.get("agent", "deepsift") != agent:
                agent = saved.values.get("agent", "deepsift")  # the thread's own agent
                graph = _graph(agent, deps, saver)
                saved = graph.get_state(config)
            if agent == "deepsift":
                bound = saved.values.get("max_iterations") or max_iterations
                bound = bound or settings.max_iterations
                config["recursion_limit"] = 10 + 4 * bound  # each round is 3-4 steps
            else:
                bound = saved.values.get("max_searches") or max_searches or settings.max_searches
                config["recursion_limit"] = 14 + 4 * bound  # two steps per search, and spares
            if saved.values:
                if question and question != saved.values["question"]:
                    raise UserError(
                        f"thread {thread_id} holds another question: "
                        f"{saved.values['question']!r}; use a new --thread"
                    )
                run_input = None  # resume where it stopped (or reread a finished run)
            else:
                if not question.strip():
                    raise UserError(
                        f"no run has thread id {thread_id}; give a question to start one"
                        if thread_id_given
                        else "the question is empty"
                    )
                run_input = {
                    "agent": agent,
                    "question": question,
                    "collections": resolve_sources(deps, collections, web),
                }
                if agent == "deepsift":
                    run_input.update(max_iterations=bound, review=review)
                else:
                    run_input.update(max_searches=bound)
            saved = _advance(graph, run_input, saved, config, on_update, reviewer)
            values = saved.values
    finally:
        if own_deps:
            deps.store.close()
    usage = values.get("usage") or Usage()
    return ResearchResult(
        agent=agent,
        status="paused" if saved.next else "done",
        question=values["question"],
        answer=values.get("answer", ""),
        report=values.get("report", ""),
        sources=[
            CitedSource(n=s.n, title=s.title, source=s.source) for s in values.get("sources", [])
        ],
        sub_queries=values.get("sub_queries", []),
        iterations=values.get("iteration", 0),
        notes=list(dict.fromkeys(values.get("notes", []))),
        usage=RunUsage(**usage.model_dump(), seconds=round(time.monotonic() - started, 2)),
        thread_id=thread_id,
    )


@contextmanager
def _checkpointer(settings: Settings, on_disk: bool) -> Iterator[BaseCheckpointSaver]:
    if not on_disk:
        yield InMemorySaver()
        return
    with SqliteSaver.from_conn_string(str(settings.checkpoint_path)) as saver:
        yield saver


def _advance(
    graph: CompiledStateGraph,
    run_input: dict | None,
    saved: StateSnapshot,
    config: dict,
    on_update: UpdateHandler | None,
    reviewer: Reviewer | None,
) -> StateSnapshot:
    """Run from the input (or on from the checkpoint) until the end, or until a pause for
    review that no reviewer answers; the state it stopped in."""
    command: dict | Command | None = run_input
    while command is not None or saved.next:
        for update in graph.stream(command, config, stream_mode="updates"):
            for node, change in update.items():
                if on_update and isinstance(change, dict):
                    on_update(node, change)
        saved = graph.get_state(config)
        waiting = [pause.value for pause in saved.interrupts]
        plan = reviewer(waiting[0]) if waiting and reviewer else None
        if plan is None:
            return saved
        command = Command(resume=plan)
    return saved


def _graph(agent: str, deps: Deps, saver: BaseCheckpointSaver) -> CompiledStateGraph:
    if agent == "search-o1":
        return build_search_o1(deps, saver)
    return build_graph(checkpointer=saver, deps=deps)
