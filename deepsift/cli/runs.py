"""`deepsift runs`: every run the data folder keeps, so a thread id is never lost."""

import argparse
import json

from rich.markup import escape
from rich.table import Table

from deepsift.cli.console import out
from deepsift.config import Settings


def add_parser(commands: argparse._SubParsersAction) -> None:
    runs = commands.add_parser(
        "runs",
        help="list every run in the data folder, newest first: thread id, question, started, "
        "status, follow-ups, agent",
        description="A run's thread id is what deepsift ask THREAD_ID and deepsift research "
        "--thread THREAD_ID take.",
    )
    runs.add_argument(
        "--json",
        action="store_true",
        help="print a JSON list: thread_id, question, started (ISO 8601, UTC), status (done, "
        "paused, stopped), followups (how many), agent",
    )
    runs.set_defaults(run=run_runs)


def run_runs(args: argparse.Namespace, settings: Settings) -> int:
    from deepsift.api import list_runs

    runs = list_runs(settings)
    if args.json:
        print(json.dumps([run.model_dump(mode="json") for run in runs], indent=2))
        return 0
    table = Table("thread id", "question", "started", "status", "follow-ups", "agent")
    for run in runs:
        started = run.started.astimezone().strftime("%Y-%m-%d %H:%M")
        table.add_row(
            run.thread_id, escape(run.question), started, run.status, str(run.followups), run.agent
        )
    out.print(table if runs else 'no runs yet: deepsift research "QUESTION"')
    return 0
