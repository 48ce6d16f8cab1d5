"""The synthesize step: the run's cited report (deepsift.report.compose)."""

from deepsift.deps import Deps
from deepsift.report.compose import compose_report
from deepsift.run.state import ResearchState


def synthesize(state: ResearchState, deps: Deps) -> dict:
    """The report, the sources it cites, what writing it cost, and the chunks its parts'
    searches added."""
    return compose_report(state, deps)
