"""The research agents, one `Agent` record each in AGENTS: what the Python API, batch, eval,
the command line and the web app know of an agent. The default agent's graph is wired in
deepsift.graph (decompose, route, search, hop, reflect, synthesize); the two that search as
they reason are here: search_o1.py and react.py, with the calculator, the few-shot examples,
and what a live view says about each step. Their search is deepsift.retrieval's.
Adding an agent: its module, with a build function taking (deps, checkpointer, finish), and
one line in AGENTS.

This module stays light (an agent's graph is imported when it is built), so the command line
can offer the agents as choices. The agents may import report, run, retrieval, llm, web,
store, text, prompts and the top-level records, config, deps and errors; never nodes, graph,
api, eval, serve or cli.
"""

from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module
from typing import Any, Literal

from deepsift.errors import UserError

# What a run ends with: a cited report, a short answer (its report optional), or nothing after
# its searches (to evaluate retrieval).
Finish = Literal["report", "answer", "retrieval"]
# (deps, checkpointer, finish) -> the compiled graph; deps None: a graph only to draw.
Builder = Callable[..., Any]


@dataclass(frozen=True)
class Agent:
    name: str
    summary: str  # what it does, in a few words (the command line's help, the web page's menu)
    build: Builder
    bound: str  # the input field that bounds a run: rounds, searches or actions at most
    setting: str  # the setting that bound defaults to
    spare_steps: int  # LangGraph's step limit: these, and steps_per_bound for each bound unit
    steps_per_bound: int
    review: bool = False  # can pause after planning, for a person to review the plan
    # The step that closes each round, where the state after round r is what a run bounded at
    # r ends with: an evaluation scores every bound 1..N from one run bounded at N.
    round_end: str | None = None

    def step_limit(self, bound: int) -> int:
        """A safety net above what the bound allows, never the bound itself."""
        return self.spare_steps + self.steps_per_bound * bound

    def bound_for(self, given: dict[str, int | None], settings: Any) -> int:
        """The run's bound: the one given by its name (e.g. max_steps), else its setting."""
        return given.get(self.bound) or getattr(settings, self.setting)


def _built_by(module: str, function: str) -> Builder:
    """deepsift.<module>.<function>, imported when first called."""

    def build(deps: Any, checkpointer: Any = None, finish: Finish = "report") -> Any:
        built = getattr(import_module(f"deepsift.{module}"), function)
        return built(deps, checkpointer, finish)

    return build


AGENTS: dict[str, Agent] = {
    agent.name: agent
    for agent in (
        # Each round is 3-4 steps.
        Agent(
            "deepsift",
            "plan, search, reflect, write",
            _built_by("graph", "build"),
            "max_iterations",
            "max_iterations",
            10,
            4,
            review=True,
            round_end="hop",
        ),
        # Two steps per search, and spares.
        Agent(
            "search-o1",
            "search while reasoning",
            _built_by("agents.search_o1", "build_search_o1"),
            "max_searches",
            "max_searches",
            14,
            4,
        ),
        # Two steps per action, then the vote and the report, and spares.
        Agent(
            "react",
            "thought, action (search, calculate), observation",
            _built_by("agents.react", "build_react"),
            "max_steps",
            "react_max_steps",
            12,
            2,
        ),
    )
}


def agent(name: str) -> Agent:
    """The agent named `name`; a UserError naming the choices when there is none."""
    if name not in AGENTS:
        raise UserError(f"unknown agent {name!r}; choose from {', '.join(AGENTS)}")
    return AGENTS[name]
