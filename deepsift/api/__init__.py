"""The Python API: research() runs an agent's graph once, with a checkpointer, and returns the
report and its costs (results.py); ask() puts a follow-up to a finished run (followups.py);
list_runs() lists the runs kept (threads.py); batch.py researches many questions at once.

May import the agents, the default agent's graph and everything below them; never eval,
studio, serve or cli.
"""

import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from typing import Any

from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command, StateSnapshot
from pydantic import BaseModel

from deepsift.agents import AGENTS
from deepsift.agents import agent as agent_named
from deepsift.api.followups import RESHAPED, ask
from deepsift.api.limits import check_question
from deepsift.api.results import (
    CitedSource,
    FollowUpResult,
    ResearchResult,
    RunUsage,
    TraceStep,
    run_result,
)
from deepsift.api.threads import RunSummary, list_runs, resources, saved_thread
from deepsift.config import LENGTHS, Length, Settings, make_folder
from deepsift.deps import Deps
from deepsift.errors import RunStopped, UserError
from deepsift.llm import replies
from deepsift.llm.endpoint import cancelled_by, endpoint_failure
from deepsift.records import Source

__all__ = [
    "RESHAPED",
    "CitedExcerpt",
    "CitedSource",
    "FollowUpResult",
    "ResearchResult",
    "RunSummary",
    "RunUsage",
    "TraceStep",
    "ask",
    "list_runs",
    "new_thread_id",
    "read_run",
    "research",
]

UpdateHandler = Callable[[str, dict[str, Any]], None]
# Given the review payload ({"question", "routes", "sources"}), the plan to run: the routes as
# they are or edited, or None to leave the run paused (resume later by thread id).
Reviewer = Callable[[dict[str, Any]], list[dict[str, Any]] | None]


def research(
    question: str = "",
    settings: Settings | None = None,
    *,
    agent: str = "deepsift",
    collections: list[str] | None = None,
    max_iterations: int | None = None,
    max_searches: int | None = None,
    max_steps: int | None = None,
    thread_id: str | None = None,
    on_update: UpdateHandler | None = None,
    web: bool | None = None,
    review: bool = False,
    reviewer: Reviewer | None = None,
    length: Length | None = None,
    language: str | None = None,
    deps: Deps | None = None,
    checkpoints: bool = True,
    cancel: threading.Event | None = None,
) -> ResearchResult:
    """Answer `question` with a cited report; with `thread_id`, resume or reread that run.

    `agent` names one of deepsift.agents.AGENTS: "deepsift" (decompose, route, search, reflect,
    synthesize; bounded by `max_iterations`), "search-o1" (searches mid-reasoning; bounded by
    `max_searches`) or "react" (thought, action, observation; bounded by `max_steps` actions).
    `collections` (names, "web" among them) limit the sources; by default every collection is
    searched, and the web too when a web backend is set up. `web` forces the web on or off.

    With `review` (deepsift only), the run pauses after planning its first searches and
    `reviewer` decides the plan; without a reviewer (or when it returns None) the result is
    "paused" until resumed. `length` (brief, standard, long) and `language` shape the deepsift
    report; by default the report_length and report_language settings. `checkpoints=False`
    keeps the run in memory only (batch runs). Setting `cancel` stops the run before its next
    model call or step (RunCancelled); what it finished is saved, and its thread id resumes it."""
    _check_request(question, agent, review, length, thread_id)
    settings = settings or Settings()
    make_folder(settings.data_dir, "DEEPSIFT_DATA_DIR")
    started = time.monotonic()
    thread_id = thread_id or new_thread_id()
    with resources(settings, deps, checkpoints) as (deps, saver):
        agent, graph, saved = saved_thread(agent, deps, saver, thread_id)
        bounds = {
            "max_iterations": max_iterations,
            "max_searches": max_searches,
            "max_steps": max_steps,
        }
        runner = AGENTS[agent]
        bound = saved.values.get(runner.bound) or runner.bound_for(bounds, settings)
        config: dict = {
            "configurable": {"thread_id": thread_id},
            "recursion_limit": runner.step_limit(bound),
        }
        if saved.values:
            _check_same_question(question, saved.values["question"], thread_id)
            run_input = None  # resume where it stopped (or reread a finished run)
        else:
            if not question.strip():
                raise UserError(
                    f"no run has thread id {thread_id}; give a question to start one, "
                    "or find yours with deepsift runs"
                )
            run_input = {
                "agent": agent,
                "question": question,
                "sources_to_search": collections or [],
                "web": web,
                runner.bound: bound,
                **({"review": review} if runner.review else {}),
                **({"report_length": length} if length else {}),
                **({"report_language": language} if language is not None else {}),
            }
        with _running(thread_id, checkpoints, cancel):
            saved = _advance(graph, run_input, saved, config, on_update, reviewer)
        if not saved.next and isinstance(deps.llm.cache, replies.RunReplies):
            deps.llm.cache.forget(thread_id)  # finished: nothing will resume it
    return run_result(agent, saved, thread_id, time.monotonic() - started)


def _check_request(
    question: str, agent: str, review: bool, length: Length | None, thread_id: str | None
) -> None:
    """Refuse, before any store or model is opened, what research() cannot run."""
    agent_named(agent)  # an unknown agent is refused
    check_question(question)
    if review and not agent_named(agent).review:
        reviewed = ", ".join(name for name, a in AGENTS.items() if a.review)
        raise UserError(f"--review works with the {reviewed} agent only")
    if length is not None and length not in LENGTHS:
        raise UserError(f"unknown report length {length!r}; choose from {', '.join(LENGTHS)}")
    if not question.strip() and thread_id is None:
        raise UserError("the question is empty")


@contextmanager
def _running(thread_id: str, checkpoints: bool, cancel: threading.Event | None) -> Iterator[None]:
    """A run's steps: its model replies kept for the thread (when checkpointed), stopped when
    `cancel` is set, and an endpoint failure turned into RunStopped, which names the thread that
    resumes it."""
    try:
        with (
            replies.kept_for(thread_id) if checkpoints else nullcontext(),
            cancelled_by(cancel),
        ):
            yield
    except Exception as e:
        reason = endpoint_failure(e)
        if reason is None or not checkpoints:
            raise
        raise RunStopped(reason, thread_id) from e


def new_thread_id() -> str:
    return uuid.uuid4().hex[:12]


class CitedExcerpt(BaseModel):
    """A retrieved passage that a report's [n] cites: its text, document and position."""

    n: int
    title: str
    source: str
    position: int
    text: str


def read_run(
    thread_id: str, settings: Settings, deps: Deps | None = None
) -> tuple[ResearchResult, list[CitedExcerpt]] | None:
    """The run saved under `thread_id` as it stands (nothing is run or resumed), with the
    excerpts its report and the answers to its follow-up questions cite (numbered as the
    report numbers them); None when no run has that thread id."""
    if not settings.checkpoint_path.exists():
        return None
    with resources(settings, deps, True) as (deps, saver):
        agent, _, saved = saved_thread("deepsift", deps, saver, thread_id)
        if not saved.values:
            return None
        chunks = saved.values.get("chunks", {})
        excerpts = [
            CitedExcerpt(
                n=cited.n,
                title=chunks[chunk_id].title,
                source=chunks[chunk_id].source,
                position=chunks[chunk_id].position,
                text=chunks[chunk_id].text,
            )
            for cited in _cited_sources(saved.values)
            for chunk_id in cited.chunk_ids
            if chunk_id in chunks
        ]
        return run_result(agent, saved, thread_id, 0.0), excerpts


def _cited_sources(values: dict) -> list[Source]:
    """The documents the report cites, then those the follow-up answers cite, each number
    once (an answer numbers a document as the report, or an earlier answer, does)."""
    answers = [f for f in values.get("followups", []) if f.kind == "answer"]
    cited: dict[int, Source] = {}
    for source in [*values.get("sources", []), *(s for f in answers for s in f.sources)]:
        kept = cited.setdefault(source.n, source.model_copy(update={"chunk_ids": []}))
        kept.chunk_ids += [i for i in source.chunk_ids if i not in kept.chunk_ids]
    return list(cited.values())


def _check_same_question(question: str, saved: str, thread_id: str) -> None:
    if question.strip() and question != saved:
        raise UserError(f"thread {thread_id} holds another question: {saved!r}; use a new --thread")


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
