"""The search step: one branch of the fan-out, a query searched in one source."""

from deepsift.deps import Deps
from deepsift.retrieval.search import search_branch
from deepsift.run.state import SearchTask


def search(task: SearchTask, deps: Deps) -> dict:
    """One branch of the fan-out: the question itself, or a decomposed sub-query."""
    return search_branch(task["query"], task["source"], task["k"], task["of_question"], deps)
