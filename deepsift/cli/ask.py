"""`deepsift ask`: a follow-up question to a finished run, a rewrite of its report, or the
conversation so far (and its export)."""

import argparse
from pathlib import Path

from rich.markdown import Markdown
from rich.markup import escape

from deepsift.cli.arguments import positive
from deepsift.cli.console import err, out
from deepsift.config import Settings
from deepsift.errors import UserError
from deepsift.report.output.export import FORMATS, check_output, report_format, write_report


def add_parser(commands: argparse._SubParsersAction) -> None:
    ask = commands.add_parser(
        "ask",
        help="ask a finished run a follow-up question, or have its report rewritten "
        "(shorter, in German, as a table, add a section on X)",
        description="Without a question: the run's follow-ups so far.",
    )
    ask.add_argument("thread", metavar="THREAD_ID", help="the run's thread id")
    ask.add_argument(
        "question",
        nargs="?",
        help="a follow-up question, or a rewrite (shorter, in German, as a table, add a section "
        "on X); none: the run's follow-ups so far",
    )
    ask.add_argument("--json", action="store_true", help="print one JSON object")
    ask.add_argument(
        "-o",
        "--output",
        type=Path,
        help="write the report (the latest version, or --version) with the follow-up questions "
        "as an appendix: .md, .html, .pdf or .docx",
    )
    ask.add_argument("--format", choices=FORMATS, help="the file's format (-o)")
    ask.add_argument(
        "--version", type=positive, help="the report version to print or write (1: the run's own)"
    )
    ask.set_defaults(run=run_ask)


def run_ask(args: argparse.Namespace, settings: Settings) -> int:
    from deepsift.api.limits import check_question  # not before: deepsift.api loads langgraph

    check_question(args.question or "")  # before the run is read: it is never kept
    if args.output:  # before any model call: the result must have somewhere to go
        check_output(args.output)
        report_format(args.output, args.format)
    if args.question is not None and not args.question.strip():
        raise UserError(
            f"the question is empty; deepsift ask {args.thread} without one lists its follow-ups"
        )
    from deepsift.api import ask, read_run

    read = read_run(args.thread, settings)
    if read is None:
        raise UserError(f"no run has thread id {args.thread}; deepsift runs lists the runs kept")
    run = read[0]
    if args.question is None and not run.asking:
        _list(run)
    else:
        with err.status("answering" if args.question else f"finishing: {run.asking}"):
            asked = ask(args.thread, args.question or "", settings)
        if args.json:
            print(asked.model_dump_json(indent=2))
        else:
            out.print(Markdown(asked.report or _with_sources(asked)))
            usage = asked.usage
            searched = f"; searched {'; '.join(asked.searched)}" if asked.searched else ""
            err.print(
                f"{usage.llm_calls} LLM calls, {usage.seconds:.0f} s{searched}"
                + (f"; version {asked.version} of the report" if asked.version else ""),
                highlight=False,
                soft_wrap=True,
            )
        run = read_run(args.thread, settings)[0]
    if args.output:
        exported = run.exported(args.version)
        try:
            write_report(exported, args.output, args.format, fonts=settings.pdf_fonts)
        except OSError as e:  # refused since it was checked (the disk filled, say)
            raise UserError(
                f"could not write {args.output}: {e.strerror or e}; the run keeps its "
                f"follow-ups: write them again with deepsift ask {args.thread} -o FILE"
            ) from e
        err.print(f"written to {args.output}", highlight=False)
    elif args.version:
        run.exported(args.version)  # a version the run does not have is refused
        out.print(Markdown(run.versions[args.version]))
    return 0


def _with_sources(asked) -> str:
    from deepsift.api.results import source_lines

    return "\n\n".join(filter(None, [asked.answer, source_lines(asked.sources)]))


def _list(run) -> None:
    """The run's question, its follow-ups in order, and its report's versions."""
    err.print(f"[bold]{escape(run.question)}[/bold] ({run.agent}, thread {run.thread_id})")
    if not run.followups:
        err.print(f'no follow-ups yet: deepsift ask {run.thread_id} "QUESTION"', highlight=False)
    for n, asked in enumerate(run.followups, 1):
        said = f"version {asked.version} of the report" if asked.version else asked.answer
        err.print(f"{n}. [bold]{escape(asked.question)}[/bold]", highlight=False)
        err.print(f"   {escape(said)}", highlight=False, soft_wrap=True)
