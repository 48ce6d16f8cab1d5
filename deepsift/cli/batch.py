"""`deepsift batch`: research every question of a JSONL file, with progress and resume."""

import argparse
from pathlib import Path

from deepsift.agents import AGENTS
from deepsift.cli.arguments import names, positive
from deepsift.cli.console import counting_progress, err
from deepsift.config import Settings
from deepsift.errors import UserError


def add_parser(commands: argparse._SubParsersAction) -> None:
    batch = commands.add_parser("batch", help="research every question of a JSONL file")
    batch.add_argument(
        "questions", type=Path, metavar="QUESTIONS.jsonl", help='lines {"id", "question"}'
    )
    batch.add_argument(
        "-o",
        "--output",
        type=Path,
        required=True,
        metavar="ANSWERS.jsonl",
        help="one JSON line per question as it finishes (a rerun skips the ones answered)",
    )
    batch.add_argument(
        "--agent",
        choices=AGENTS,
        default="deepsift",
        help="the agent that answers (default: deepsift)",
    )
    batch.add_argument(
        "--concurrency",
        type=positive,
        help="questions in flight at once (default: the endpoint's llm_concurrency, or the "
        "embedded model's local_slots)",
    )
    batch.add_argument("--collections", type=names, help="comma-separated sources to search")
    batch.set_defaults(run=run_batch_command)


def run_batch_command(args: argparse.Namespace, settings: Settings) -> int:
    from deepsift.api.batch import answered_ids, read_questions, run_batch

    if args.concurrency is not None and args.concurrency < 1:
        raise UserError("--concurrency must be at least 1")
    questions = read_questions(args.questions)
    done = answered_ids(args.output)
    todo = [q for q in questions if q.id not in done]
    if done:
        err.print(f"{len(done)} already answered in {args.output}; {len(todo)} to go")
    concurrency = args.concurrency or settings.llm_parallel
    if settings.uses_local_llm and concurrency > settings.local_slots:
        err.print(
            f"note: the embedded model serves {settings.local_slots} requests at a time "
            f"(DEEPSIFT_LOCAL_SLOTS); running {settings.local_slots} questions at a time"
        )
        concurrency = settings.local_slots
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
            collections=args.collections,
            on_done=on_done,
        )
    err.print(f"{len(todo) - failed} answered, {failed} failed; answers in {args.output}")
    return 1 if todo and failed == len(todo) else 0
