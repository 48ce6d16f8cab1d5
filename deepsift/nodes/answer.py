"""The answer step: the graph's short-answer mode (deepsift.report.writing.short_answer)."""

from deepsift.deps import Deps
from deepsift.report.writing.short_answer import short_answer
from deepsift.run.state import ResearchState


def answer(state: ResearchState, deps: Deps) -> dict:
    """A few words from the best chunks, for exact-match evaluation."""
    return short_answer(state, deps)
