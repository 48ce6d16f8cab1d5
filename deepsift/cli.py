"""The `deepsift` command: ingest, collections, research."""

import argparse
import json
import logging
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import openai
from rich.console import Console
from rich.markdown import Markdown
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from deepsift.citations import display_path
from deepsift.config import Settings
from deepsift.errors import UserError

err = Console(stderr=True)
out = Console()


def main(argv: list[str] | None = None) -> None:
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s: %(message)s")
    try:
        settings = Settings()
        sys.exit(args.run(args, settings) or 0)
    except KeyboardInterrupt:
        err.print("interrupted")
        sys.exit(130)
    except Exception as e:
        message = _user_error(e)
        if message is None:
            raise
        err.print(f"[red]error:[/red] {message}", highlight=False, soft_wrap=True)
        sys.exit(2)


def _user_error(e: Exception) -> str | None:
    """The one line to show for a failure the user can fix; None for a bug."""
    from pydantic import ValidationError

    if isinstance(e, openai.APIConnectionError | openai.APITimeoutError):
        url = str(getattr(e.request, "url", "")) if getattr(e, "request", None) else ""
        return (
            f"cannot reach the LLM endpoint {url or '(unknown)'}: {e}; check DEEPSIFT_LLM_BASE_URL"
        )
    if isinstance(e, openai.APIStatusError):
        return f"the LLM endpoint {e.request.url} answered {e.status_code}: {e.message}"
    if isinstance(e, ValidationError):
        first = e.errors()[0]
        field = ".".join(str(p) for p in first["loc"])
        where = f"environment DEEPSIFT_{field.upper()} or deepsift.toml"
        return f"invalid setting {field}: {first['msg']} ({where})"
    if isinstance(e, UserError):
        return str(e)
    return None


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="deepsift", description="Deep research over your Milvus collections."
    )
    commands = parser.add_subparsers(required=True, metavar="COMMAND")

    ingest = commands.add_parser("ingest", help="add files or folders to a collection")
    ingest.add_argument("paths", nargs="+", type=Path, metavar="PATH")
    ingest.add_argument("--collection", required=True)
    ingest.add_argument("--description", help="what the collection holds (used for routing)")
    ingest.add_argument("--prune", action="store_true", help="remove files that no longer exist")
    ingest.set_defaults(run=run_ingest)

    collections = commands.add_parser("collections", help="list collections, or drop one")
    collections.add_argument("action", nargs="?", choices=["drop"])
    collections.add_argument("name", nargs="?")
    collections.add_argument("--json", action="store_true")
    collections.set_defaults(run=run_collections)

    research = commands.add_parser("research", help="research a question and write a report")
    research.add_argument("question", nargs="?", default="")
    research.add_argument("-o", "--output", type=Path, help="write the report (Markdown) here")
    research.add_argument("--collections", help="comma-separated collections to search")
    research.add_argument(
        "--agent",
        choices=["deepsift", "search-o1"],
        default="deepsift",
        help="deepsift: plan, search, reflect, write; search-o1: search while reasoning",
    )
    research.add_argument("--max-iterations", type=int, help="deepsift: rounds at most")
    research.add_argument("--max-searches", type=int, help="search-o1: searches at most")
    research.add_argument("--thread", help="thread id: resume or reread that run")
    research.add_argument("--json", action="store_true", help="print one JSON object")
    research.add_argument(
        "--web",
        action=argparse.BooleanOptionalAction,
        help="search the web too (default: when a Tavily key is set), or never (--no-web)",
    )
    research.add_argument(
        "--review", action="store_true", help="review and edit the planned searches before they run"
    )
    research.set_defaults(run=run_research)

    batch = commands.add_parser("batch", help="research every question of a JSONL file")
    batch.add_argument(
        "questions", type=Path, metavar="QUESTIONS.jsonl", help='lines {"id", "question"}'
    )
    batch.add_argument("-o", "--output", type=Path, required=True, metavar="ANSWERS.jsonl")
    batch.add_argument("--agent", choices=["deepsift", "search-o1"], default="deepsift")
    batch.add_argument("--concurrency", type=int, default=4, help="questions in flight at once")
    batch.add_argument("--collections", help="comma-separated sources to search")
    batch.set_defaults(run=run_batch_command)

    graph = commands.add_parser("graph", help="print the research graph as a Mermaid diagram")
    graph.set_defaults(run=run_graph)

    from deepsift.eval.command import add_parser as add_eval

    add_eval(commands)
    return parser


def _open_store(settings: Settings):
    from deepsift.store import Store

    return Store(settings)


def run_ingest(args: argparse.Namespace, settings: Settings) -> int:
    from deepsift.ingest.pipeline import FileResult, ingest
    from deepsift.models import get_embedder
    from deepsift.store import check_collection_name

    check_collection_name(args.collection)
    store = _open_store(settings)
    if args.description is None and not store.exists(args.collection):
        err.print(
            f"note: {args.collection} has no description; the router chooses collections by "
            "their descriptions, so add one with --description on a later ingest",
            highlight=False,
            soft_wrap=True,
        )
    started = time.monotonic()
    columns = [
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    ]
    with store, Progress(*columns, console=err, transient=True) as progress:
        task = progress.add_task("loading the embedding model", total=None)
        chunks = 0

        def on_start(total: int) -> None:
            progress.update(task, total=total, description="files  0 new chunks")

        def on_file(result: FileResult) -> None:
            nonlocal chunks
            if result.status == "failed":
                progress.console.print(
                    f"[yellow]skipped[/yellow] {display_path(result.source)}: {result.error}",
                    highlight=False,
                    soft_wrap=True,
                )
            else:
                chunks += result.chunks if result.status in ("added", "updated") else 0
                progress.advance(task)
            progress.update(task, description=f"files  {chunks} new chunks")

        embedder = get_embedder(settings)
        report = ingest(
            args.paths,
            args.collection,
            store,
            embedder,
            settings,
            description=args.description,
            prune=args.prune,
            on_file=on_file,
            on_start=on_start,
        )
    seconds = time.monotonic() - started
    table = Table(title=f"ingest into {args.collection}", title_justify="left")
    for column in ("added", "updated", "unchanged", "pruned", "failed", "new chunks", "seconds"):
        table.add_column(column, justify="right")
    counts = [report.count(s) for s in ("added", "updated", "unchanged", "pruned", "failed")]
    table.add_row(*map(str, counts), str(report.new_chunks), f"{seconds:.1f}")
    err.print(table)
    return 0 if report.succeeded else 1


def run_collections(args: argparse.Namespace, settings: Settings) -> int:
    with _open_store(settings) as store:
        if args.action == "drop":
            if not args.name:
                raise UserError("usage: deepsift collections drop NAME")
            store.drop(args.name)
            err.print(f"dropped collection {args.name}")
            return 0
        infos = [store.info(name) for name in store.names()]
    if args.json:
        print(json.dumps([info.model_dump() for info in infos], indent=2))
        return 0
    table = Table("name", "description", "documents", "chunks", "embedding model")
    for info in infos:
        table.add_row(
            info.name, info.description, str(info.documents), str(info.chunks), info.embedding_model
        )
    out.print(table if infos else "no collections yet: deepsift ingest PATH --collection NAME")
    return 0


def run_research(args: argparse.Namespace, settings: Settings) -> int:
    from deepsift.api import research

    if not args.question and not args.thread:
        raise UserError('give a question: deepsift research "QUESTION"')
    for flag in ("max_iterations", "max_searches"):
        if getattr(args, flag) is not None and getattr(args, flag) < 1:
            raise UserError(f"--{flag.replace('_', '-')} must be at least 1")
    collections = _split(args.collections)
    with err.status("starting", spinner="dots") as status:
        result = research(
            args.question,
            settings,
            agent=args.agent,
            collections=collections,
            max_iterations=args.max_iterations,
            max_searches=args.max_searches,
            thread_id=args.thread,
            on_update=_live_view(status),
            web=args.web,
            review=args.review,
            reviewer=_ask_reviewer(status),
        )
    for note in result.notes:
        err.print(f"[yellow]note:[/yellow] {note}", highlight=False, soft_wrap=True)
    if result.status == "paused":
        err.print(
            "paused for review; resume with: deepsift research --thread " + result.thread_id,
            highlight=False,
        )
        if args.json:
            print(result.model_dump_json(indent=2))
        return 0
    if args.output:
        args.output.write_text(result.report, encoding="utf-8")
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


REVIEW_HELP = """Enter: run this plan · e N TEXT: edit query N · d N: drop query N
s N A,B: search query N in sources A,B · a TEXT: add a query · q: stop here (resume later)"""


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
                err.print(f"[yellow]{e}[/yellow]", highlight=False)

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


def run_batch_command(args: argparse.Namespace, settings: Settings) -> int:
    from deepsift.batch import answered_ids, read_questions, run_batch

    if args.concurrency < 1:
        raise UserError("--concurrency must be at least 1")
    questions = read_questions(args.questions)
    done = answered_ids(args.output)
    todo = [q for q in questions if q.id not in done]
    if done:
        err.print(f"{len(done)} already answered in {args.output}; {len(todo)} to go")
    concurrency = args.concurrency
    if settings.uses_local_llm and concurrency > 1:
        err.print("note: the embedded model serves one request at a time; running 1 at a time")
        concurrency = 1
    failed = 0
    with counting_progress() as progress:
        task = progress.add_task("questions", total=len(todo), failed=0)

        def on_done(question_id: str, error: str | None) -> None:
            nonlocal failed
            if error:
                failed += 1
                progress.console.print(
                    f"[yellow]failed[/yellow] {question_id}: {error}", highlight=False
                )
            progress.update(task, advance=1, failed=failed)

        run_batch(
            todo,
            args.output,
            settings,
            agent=args.agent,
            concurrency=concurrency,
            collections=_split(args.collections),
            on_done=on_done,
        )
    err.print(f"{len(todo) - failed} answered, {failed} failed; answers in {args.output}")
    return 1 if todo and failed == len(todo) else 0


def _split(names: str | None) -> list[str] | None:
    return [n.strip() for n in names.split(",") if n.strip()] if names else None


def run_graph(args: argparse.Namespace, settings: Settings) -> int:
    from deepsift.graph import mermaid

    print(mermaid())
    return 0


def _live_view(status: Any) -> Callable[[str, dict[str, Any]], None]:
    """Print each step of the graph as it finishes; the spinner names the step running next."""
    next_step = {
        "decompose": "routing",
        "route": "searching",
        "search": "thinking",
        "reflect": "working",
        "review": "searching",
        "reason": "reasoning",
        "finish": "done",
        "synthesize": "done",
    }

    def show(node: str, update: dict[str, Any]) -> None:
        if node == "decompose":
            err.print("[bold]sub-queries[/bold]")
            for query in update.get("pending", []):
                err.print(f"  • {query}", highlight=False)
        elif node in ("route", "review"):
            for route in update.get("routes", []):
                err.print(
                    f"[bold]route[/bold] {route.query} → {', '.join(route.sources)}",
                    highlight=False,
                )
        elif node == "search":
            for chunk in list(update.get("chunks", {}).values())[:1]:
                found = len(update["chunks"])
                err.print(
                    f"[bold]search[/bold] {chunk.collection}: {found} chunks for “{chunk.query}”",
                    highlight=False,
                )
        elif node == "reflect":
            new = update.get("pending")
            if new:
                err.print("[bold]reflect[/bold] still missing, searching again:")
                for query in new:
                    err.print(f"  • {query}", highlight=False)
            else:
                err.print("[bold]reflect[/bold] enough found; writing the report")
        elif node == "reason" and update.get("query"):
            err.print(f"[bold]reason[/bold] searching for “{update['query']}”", highlight=False)
        elif node == "reason":
            err.print("[bold]reason[/bold] reached an answer; writing the report")
        elif node in ("synthesize", "finish"):
            err.print(
                f"[bold]report[/bold] written, citing {len(update.get('sources', []))} documents"
            )
        status.update(next_step.get(node, node))

    return show
