"""Where the commands write: the consoles, the live view of a research run, progress bars."""

from collections.abc import Callable
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from deepsift.untrusted import one_line

err = Console(stderr=True)
out = Console()


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
    next_step = {
        "decompose": "routing",
        "route": "searching",
        "search": "thinking",
        "reflect": "working",
        "review": "searching",
        "reason": "reasoning",
        "calculate": "reasoning",
        "vote": "writing the report",
        "finish": "done",
        "synthesize": "done",
    }

    status.update(Waiting("starting"))

    def show(node: str, update: dict[str, Any]) -> None:
        took = _took(node, update)
        if node == "decompose":
            err.print(f"[bold]sub-queries[/bold]{took}")
            for query in update.get("pending", []):
                err.print(f"  • {query}", highlight=False)
        elif node in ("route", "review"):
            for n, route in enumerate(update.get("routes", [])):
                err.print(
                    f"[bold]route[/bold] {route.query} → {', '.join(route.sources)}"
                    + ("" if n else took),  # one step's time, once
                    highlight=False,
                )
        elif node == "search":
            for chunk in list(update.get("chunks", {}).values())[:1]:
                found = len(update["chunks"])
                err.print(
                    f"[bold]search[/bold] {chunk.collection}: {found} chunks"
                    f" for “{chunk.query}”{took}",
                    highlight=False,
                )
        elif node == "reflect":
            new = update.get("pending")
            if new:
                err.print(f"[bold]reflect[/bold] still missing, searching again:{took}")
                for query in new:
                    err.print(f"  • {query}", highlight=False)
            else:
                err.print(f"[bold]reflect[/bold] enough found; writing the report{took}")
        elif node == "reason" and (update.get("pending") or update.get("actions")):
            done = update.get("pending") or update["actions"][-1]
            # The model's words are text, not markup ("[bold]" in a thought stays as written).
            thought = escape(one_line(done["thought"]))
            action = escape(f"{done['action']}[{one_line(done['argument'])}]")
            err.print(f"[bold]act[/bold] {thought}{took}\n  {action}", highlight=False)
        elif node == "reason" and update.get("stopped"):
            err.print(f"[bold]reason[/bold] stopped: {update['stopped']}; voting{took}")
        elif node == "calculate":
            result = escape(update["actions"][0]["observation"])
            err.print(f"[bold]calculate[/bold] {result}{took}", highlight=False)
        elif node == "vote":
            votes = ", ".join(f"{escape(a)} ({n})" for a, n in update.get("votes", {}).items())
            err.print(f"[bold]vote[/bold] {votes or 'no answer'}{took}", highlight=False)
        elif node == "reason" and update.get("query"):
            err.print(
                f"[bold]reason[/bold] searching for “{update['query']}”{took}", highlight=False
            )
        elif node == "reason":
            err.print(f"[bold]reason[/bold] reached an answer; writing the report{took}")
        elif node in ("synthesize", "finish"):
            err.print(
                f"[bold]report[/bold] written, citing {len(update.get('sources', []))} documents"
                + took
            )
        status.update(Waiting(next_step.get(node, node)))

    return show


class Waiting:
    """The spinner's text: the step running, and how long a model call has been outstanding
    (a silent endpoint shows here, long before the run gives up on it)."""

    def __init__(self, step: str) -> None:
        self.step = step

    def __rich__(self) -> str:
        from deepsift.models import llm_waiting  # loaded by then: the run has started

        waited = llm_waiting()
        if waited is None or waited < 1:
            return self.step
        return f"{self.step} · waiting for the model ({waited:.0f} s)"


def _took(node: str, update: dict[str, Any]) -> str:
    """The seconds the step just took, as the live view shows them."""
    usage = update.get("usage")
    cost = usage.steps.get(node) if usage else None
    return f" [dim]({cost.seconds:.1f} s)[/dim]" if cost else ""
