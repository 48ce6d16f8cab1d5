"""Where the commands write: the consoles, the live view of a research run, progress bars."""

from collections.abc import Callable
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from deepsift.agents.live_steps import NEXT_STEP, step_lines

err = Console(stderr=True)
out = Console()


def transient_progress(elapsed: bool = False) -> Progress:
    """A progress bar of done items that goes away when they are (with the time so far when
    `elapsed`)."""
    columns = [TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn()]
    return Progress(
        *columns, *([TimeElapsedColumn()] if elapsed else []), console=err, transient=True
    )


def counting_progress() -> Progress:
    """A progress bar of done items that also counts failures and shows the time left."""
    columns = [
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[failed]} failed"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    ]
    return Progress(*columns, console=err)


def live_view(status: Any) -> Callable[[str, dict[str, Any]], None]:
    """Print each step of the graph as it finishes; the spinner names the step running next."""
    status.update(Waiting("starting"))

    def show(node: str, update: dict[str, Any]) -> None:
        for line in step_lines(node, update):
            err.print(line, highlight=False)
        status.update(Waiting(NEXT_STEP.get(node, node)))

    return show


class Waiting:
    """The spinner's text: the step running, and how long a model call has been outstanding
    (a silent endpoint shows here, long before the run gives up on it)."""

    def __init__(self, step: str) -> None:
        self.step = step

    def __rich__(self) -> str:
        from deepsift.llm.endpoint import llm_waiting  # loaded by then: the run has started

        waited = llm_waiting()
        if waited is None or waited < 1:
            return self.step
        return f"{self.step} · waiting for the model ({waited:.0f} s)"
