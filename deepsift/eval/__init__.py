"""Evaluation: benchmark datasets, metrics, the runner behind `deepsift eval retrieval|answers`
and its summaries, and the scoring of reports (`deepsift eval reports`). The command itself is
deepsift.cli.eval.

May import the agents and everything below them, and the Python API (api); never studio, serve
or cli.
"""

from deepsift.agents import AGENTS

NAIVE = "naive"  # one hybrid search with the question as asked: the baseline, not an agent


def eval_agents() -> list[str]:
    """What an evaluation can run: naive, then every agent."""
    return [NAIVE, *AGENTS]
