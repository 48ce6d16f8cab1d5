"""What a research run's live view says about each graph step: Rich markup lines, one source for
the terminal (cli/console.py) and the web page (deepsift serve)."""

from typing import Any

from rich.markup import escape

from deepsift.text.untrusted import one_line

# The step that runs after each one, as the spinner (or the page) names it.
NEXT_STEP = {
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


def step_lines(node: str, update: dict[str, Any]) -> list[str]:
    """The lines (Rich markup; text from models and documents escaped) that show a finished
    step; none for a step the view does not show."""
    took = _took(node, update)
    if node == "decompose":
        queries = [f"  • {escape(query)}" for query in update.get("pending", [])]
        return [f"[bold]sub-queries[/bold]{took}", *queries]
    if node in ("route", "review"):
        return [
            f"[bold]route[/bold] {escape(route.query)} → {escape(', '.join(route.sources))}"
            + ("" if n else took)  # one step's time, once
            for n, route in enumerate(update.get("routes", []))
        ]
    if node == "search" and update.get("web_searches"):
        return [f"[bold]search[/bold] web: {escape(said)}{took}" for said in update["web_searches"]]
    if node == "search":
        return [
            f"[bold]search[/bold] {escape(chunk.collection)}: {len(update['chunks'])} chunks"
            f" for “{escape(chunk.query)}”{took}"
            for chunk in list(update.get("chunks", {}).values())[:1]
        ]
    if node == "reflect":
        new = update.get("pending")
        if new:
            queries = [f"  • {escape(query)}" for query in new]
            return [f"[bold]reflect[/bold] still missing, searching again:{took}", *queries]
        return [f"[bold]reflect[/bold] enough found; writing the report{took}"]
    if node == "reason" and (update.get("pending") or update.get("actions")):
        done = update.get("pending") or update["actions"][-1]
        # The model's words are text, not markup ("[bold]" in a thought stays as written).
        thought = escape(one_line(done["thought"]))
        action = escape(f"{done['action']}[{one_line(done['argument'])}]")
        return [f"[bold]act[/bold] {thought}{took}", f"  {action}"]
    if node == "reason" and update.get("stopped"):
        return [f"[bold]reason[/bold] stopped: {escape(update['stopped'])}; voting{took}"]
    if node == "calculate":
        return [f"[bold]calculate[/bold] {escape(update['actions'][0]['observation'])}{took}"]
    if node == "vote":
        votes = ", ".join(f"{escape(a)} ({n})" for a, n in update.get("votes", {}).items())
        return [f"[bold]vote[/bold] {votes or 'no answer'}{took}"]
    if node == "reason" and update.get("query"):
        return [f"[bold]reason[/bold] searching for “{escape(update['query'])}”{took}"]
    if node == "reason":
        return [f"[bold]reason[/bold] reached an answer; writing the report{took}"]
    if node in ("synthesize", "finish"):
        cited = len(update.get("sources", []))
        documents = "document" if cited == 1 else "documents"
        return [f"[bold]report[/bold] written, citing {cited} {documents}{took}"]
    return []


def _took(node: str, update: dict[str, Any]) -> str:
    """The seconds the step just took, as the live view shows them."""
    usage = update.get("usage")
    cost = usage.steps.get(node) if usage else None
    return f" [dim]({cost.seconds:.1f} s)[/dim]" if cost else ""
