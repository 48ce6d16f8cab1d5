"""The hop step: the LLM-free hop from the run's best chunks (deepsift.retrieval.hop)."""

from deepsift.deps import Deps
from deepsift.retrieval.hop import next_hop
from deepsift.run.state import ResearchState


def hop(state: ResearchState, deps: Deps) -> dict:
    """Follow the names and references of the run's best chunks not followed before."""
    return next_hop(state, deps)
