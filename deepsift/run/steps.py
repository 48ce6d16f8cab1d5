"""timed(): a graph step that records its own seconds, LLM calls and tokens in the run's usage."""

import dataclasses
import functools
import time
from collections.abc import Callable
from typing import Any

from langgraph.types import Command

from deepsift.llm.endpoint import check_cancelled
from deepsift.records import StepCost, Usage


def timed(name: str, step: Callable[..., Any]) -> Callable[..., Any]:
    """`step`, charging what it spends to `name` in `usage.steps` (signature kept, so LangGraph
    still reads the step's input type)."""

    @functools.wraps(step)
    def run(*args: Any, **kwargs: Any) -> Any:
        # A cancelled run fails its next step before it starts: LangGraph keeps the finished
        # steps and runs this one again on resume (stopping its stream mid-step would not).
        check_cancelled()
        started = time.monotonic()
        result = step(*args, **kwargs)
        return _charged(result, name, time.monotonic() - started)

    return run


def _charged(result: Any, name: str, seconds: float) -> Any:
    if isinstance(result, Command):
        update = dict(result.update or {})
        return dataclasses.replace(result, update=_with_cost(update, name, seconds))
    return _with_cost(dict(result or {}), name, seconds)


def _with_cost(update: dict, name: str, seconds: float) -> dict:
    usage: Usage = update.get("usage") or Usage()
    cost = StepCost(
        seconds=round(seconds, 3),
        llm_calls=usage.llm_calls,
        prompt_tokens=usage.prompt_tokens,
        completion_tokens=usage.completion_tokens,
    )
    return {**update, "usage": usage.model_copy(update={"steps": {name: cost}})}


def step(name: str, fn: Callable[..., Any], **bound: Any) -> Callable[..., Any]:
    """The node to add as `name`: `fn` timed, with `bound` arguments (its deps) filled in."""
    return functools.partial(timed(name, fn), **bound)
