"""`deepsift research` with its live view and review prompt."""

import argparse
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rich.markdown import Markdown
from rich.markup import escape

from deepsift.agents import AGENTS
from deepsift.cli.arguments import names, positive
from deepsift.cli.console import err, live_view, out
from deepsift.config import LENGTHS, Settings
from deepsift.errors import RunStopped, UserError
from deepsift.report.output.export import FORMATS, check_output, report_format, write_report

REVIEW_HELP = """Enter: run this plan · e N TEXT: edit query N · d N: drop query N
s N A,B: search query N in sources A,B · a TEXT: add a query · q: stop here (resume later)"""


def add_parser(commands: argparse._SubParsersAction) -> None:
    research = commands.add_parser("research", help="research a question and write a report")
    research.add_argument(
        "question", nargs="?", default="", help="the question (none: with --thread, that run)"
    )
    research.add_argument(
        "-o", "--output", type=Path, help="write the report here: .md, .html, .pdf or .docx"
    )
    research.add_argument("--format", choices=FORMATS, help="the report file's format (-o)")
    research.add_argument("--collections", type=names, help="comma-separated collections to search")
    research.add_argument(
        "--agent",
        choices=AGENTS,
        default="deepsift",
        help="; ".join(f"{a.name}: {a.summary}" for a in AGENTS.values()),
    )
    research.add_argument(
        "--max-iterations",
        type=positive,
        help="deepsift: rounds at most (default: 1 on the embedded model, 3 on an endpoint)",
    )
    research.add_argument("--max-searches", type=positive, help="search-o1: searches at most")
    research.add_argument(
        "--max-steps",
        type=positive,
        help="react: actions at most (default: setting react_max_steps)",
    )
    research.add_argument("--thread", help="thread id: resume or reread that run")
    research.add_argument("--json", action="store_true", help="print one JSON object")
    research.add_argument(
        "--web",
        action=argparse.BooleanOptionalAction,
        help="search the web too (default: when a web backend is set up), or never (--no-web)",
    )
    research.add_argument(
        "--review", action="store_true", help="review and edit the planned searches before they run"
    )
    research.add_argument(
        "--length",
        choices=LENGTHS,
        help="report body: brief ~300, standard ~1,000, long ~2,500 words (default: setting "
        "report_length, standard)",
    )
    research.add_argument(
        "--language",
        help="write the report in this language, e.g. german (default: the question's)",
    )
    research.set_defaults(run=run_research)


def run_research(args: argparse.Namespace, settings: Settings) -> int:
    if not args.question.strip() and not args.thread:  # before loading any model
        raise UserError('give a question: deepsift research "QUESTION"')
    if args.output:  # before the run: a finished report must have somewhere to go
        check_output(args.output)
        report_format(args.output, args.format)
    from deepsift.api import new_thread_id, research

    thread_id = args.thread or new_thread_id()  # known here, so an interrupted run can name it
    try:
        with err.status("starting", spinner="dots") as status, _resumable():
            result = research(
                args.question,
                settings,
                agent=args.agent,
                collections=args.collections,
                max_iterations=args.max_iterations,
                max_searches=args.max_searches,
                max_steps=args.max_steps,
                thread_id=thread_id,
                on_update=live_view(status),
                web=args.web,
                review=args.review,
                reviewer=_ask_reviewer(status),
                length=args.length,
                language=args.language,
            )
    except KeyboardInterrupt:
        err.print(
            f"interrupted; the finished steps are saved: resume with: deepsift research "
            f"--thread {thread_id}",
            highlight=False,
            soft_wrap=True,
        )
        return 130
    for note in result.notes:
        err.print(f"[yellow]note:[/yellow] {escape(note)}", highlight=False, soft_wrap=True)
    if result.status == "paused":
        err.print(
            "paused for review; resume with: deepsift research --thread " + result.thread_id,
            highlight=False,
        )
        if args.json:
            print(result.model_dump_json(indent=2))
        return 0
    if args.output:
        try:
            write_report(result.report, args.output, args.format, fonts=settings.pdf_fonts)
        except OSError as e:
            print(result.report)  # never lose a finished report
            raise UserError(
                f"could not write {args.output}: {e}; the report is printed above "
                f"(reread it with --thread {result.thread_id})"
            ) from e
    if args.json:
        print(result.model_dump_json(indent=2))
    else:
        out.print(Markdown(result.report))
        usage = result.usage
        err.print(
            f"{usage.llm_calls} LLM calls, {usage.prompt_tokens} prompt + "
            f"{usage.completion_tokens} "
            f"completion tokens, {usage.seconds:.0f} s; thread {result.thread_id}"
            + (f"; report written to {args.output}" if args.output else ""),
            highlight=False,
        )
    return 0


@contextmanager
def _resumable() -> Iterator[None]:
    """A run stopped part way says how to resume it, as a paused one does."""
    try:
        yield
    except RunStopped as e:
        raise UserError(f"{e.reason}; resume with: deepsift research --thread {e.thread_id}") from e


def _ask_reviewer(status: Any) -> Callable[[dict[str, Any]], list[dict[str, Any]] | None]:
    """Review the planned searches at the terminal; None (q, or end of input) leaves the run
    paused."""

    def ask(pending: dict[str, Any]) -> list[dict[str, Any]] | None:
        plan = [dict(route) for route in pending["routes"]]
        status.stop()
        err.print(f"[bold]review[/bold] sources: {', '.join(pending['sources'])}", highlight=False)
        err.print(REVIEW_HELP, highlight=False)
        while True:
            for n, route in enumerate(plan, 1):
                err.print(
                    f"  {n}. {route['query']} → {', '.join(route['sources'])}", highlight=False
                )
            try:
                line = err.input("review> ").strip()
            except EOFError:
                return None
            if not line:
                if plan:
                    status.start()
                    return plan
                err.print("the plan is empty: add a query (a TEXT) or stop (q)")
                continue
            if line == "q":
                return None
            try:
                _edit_plan(plan, line, pending["sources"])
            except ValueError as e:
                err.print(f"[yellow]{escape(str(e))}[/yellow]", highlight=False)

    return ask


def _edit_plan(plan: list[dict[str, Any]], line: str, sources: dict[str, str]) -> None:
    """Apply one review command to `plan`; ValueError says what was wrong with it."""
    command, _, rest = line.partition(" ")
    if command == "a" and rest.strip():
        plan.append({"query": rest.strip(), "sources": list(sources)})
        return
    number, _, text = rest.strip().partition(" ")
    if command not in ("e", "d", "s") or not number.isdigit() or not 1 <= int(number) <= len(plan):
        raise ValueError(f"not understood: {line!r}\n{REVIEW_HELP}")
    route = plan[int(number) - 1]
    if command == "d":
        plan.remove(route)
    elif command == "e" and text.strip():
        route["query"] = text.strip()
    elif command == "s":
        picked = [name.strip() for name in text.split(",") if name.strip()]
        unknown = [name for name in picked if name not in sources]
        if unknown or not picked:
            raise ValueError(f"choose sources from: {', '.join(sources)}")
        route["sources"] = picked
    else:
        raise ValueError(f"not understood: {line!r}\n{REVIEW_HELP}")
