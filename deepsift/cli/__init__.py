"""The `deepsift` command: the parser, and one module per command group beside it.

Each command imports what it needs when it runs, so `deepsift --help`, `collections`, `ingest`
and `graph` load neither the web stack nor the evaluation stack.

May import anything; nothing imports it but __main__.
"""

import argparse
import logging
import math
import sys
from pathlib import Path
from typing import NoReturn

from rich.markup import escape

from deepsift.agents import AGENTS
from deepsift.cli.ask import run_ask
from deepsift.cli.batch import run_batch_command
from deepsift.cli.collections import run_collections
from deepsift.cli.console import err
from deepsift.cli.eval import add_parser as add_eval
from deepsift.cli.ingest import run_ingest
from deepsift.cli.mcp import run_mcp
from deepsift.cli.research import run_graph, run_research
from deepsift.cli.serve import run_serve
from deepsift.config import LENGTHS, load_settings
from deepsift.errors import UserError
from deepsift.report.output.export import FORMATS


def main(argv: list[str] | None = None) -> None:
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s: %(message)s")
    try:
        settings = load_settings(**_setting_flags(args))
        sys.exit(args.run(args, settings) or 0)
    except KeyboardInterrupt:
        err.print("interrupted")
        sys.exit(130)
    except Exception as e:
        message = _user_error(e)
        if message is None:
            raise
        # Escaped: "pip install -e '.[local]'" and names with brackets are not markup.
        err.print(f"[red]error:[/red] {escape(message)}", highlight=False, soft_wrap=True)
        sys.exit(2)


def _user_error(e: Exception) -> str | None:
    """The one line to show for a failure the user can fix; None for a bug."""
    if isinstance(e, UserError):
        return str(e)
    from deepsift.llm.endpoint import endpoint_failure  # not before: it loads the model libraries

    return endpoint_failure(e)


def _setting_flags(args: argparse.Namespace) -> dict[str, float | str]:
    """The settings that command-line flags override."""
    flags = {"store_wait": "wait", "ray_address": "ray", "ray_workers": "ray_workers"}
    given = {setting: getattr(args, flag, None) for setting, flag in flags.items()}
    return {setting: value for setting, value in given.items() if value is not None}


class _Parser(argparse.ArgumentParser):
    """A command-line mistake is one line, like every other error, with exit status 2."""

    def error(self, message: str) -> NoReturn:
        err.print(
            f"[red]error:[/red] {self.prog}: {message} (see {self.prog} --help)",
            highlight=False,
            soft_wrap=True,
        )
        sys.exit(2)


def _positive(text: str) -> int:
    """A whole number ≥ 1 (argparse type: its error names the flag)."""
    if not text.strip().isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number ≥ 1, got {text!r}")
    return int(text)


def _seconds(text: str) -> float:
    """Seconds ≥ 0 (argparse type)."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"expected seconds ≥ 0, got {text!r}")
    return value


def _names(names: str) -> list[str] | None:
    """A comma-separated list of names; None (search the default sources) when it is empty."""
    return [n.strip() for n in names.split(",") if n.strip()] if names else None


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="deepsift", description="Deep research over your Milvus collections.")
    commands = parser.add_subparsers(required=True, metavar="COMMAND")

    ingest = commands.add_parser(
        "ingest", help="add files, folders or web pages (http(s) URLs) to a collection"
    )
    ingest.add_argument("paths", nargs="*", metavar="PATH|URL")
    ingest.add_argument(
        "--urls", type=Path, metavar="FILE", help="a file of URLs to ingest, one a line"
    )
    ingest.add_argument("--collection", required=True)
    ingest.add_argument("--description", help="what the collection holds (used for routing)")
    ingest.add_argument(
        "--prune",
        action="store_true",
        help="remove files that no longer exist, and (in a run with URLs) pages no longer listed",
    )
    ingest.add_argument(
        "--ray",
        nargs="?",
        const="local",
        metavar="ADDRESS",
        help="load, chunk and embed on Ray: 'local' (the default: a runtime on this machine), "
        "'auto' (the cluster this machine belongs to) or a cluster address (setting "
        "ray_address)",
    )
    ingest.add_argument(
        "--ray-workers", type=_positive, metavar="N", help="embedding actors (setting ray_workers)"
    )
    ingest.set_defaults(run=run_ingest)

    collections = commands.add_parser(
        "collections", help="list collections, drop one, or re-embed one with the current embedder"
    )
    collections.add_argument("action", nargs="?", choices=["drop", "reembed"])
    collections.add_argument("name", nargs="?")
    collections.add_argument("--json", action="store_true")
    collections.set_defaults(run=run_collections)

    research = commands.add_parser("research", help="research a question and write a report")
    research.add_argument("question", nargs="?", default="")
    research.add_argument(
        "-o", "--output", type=Path, help="write the report here: .md, .html, .pdf or .docx"
    )
    research.add_argument("--format", choices=FORMATS, help="the report file's format (-o)")
    research.add_argument(
        "--collections", type=_names, help="comma-separated collections to search"
    )
    research.add_argument(
        "--agent",
        choices=AGENTS,
        default="deepsift",
        help="; ".join(f"{a.name}: {a.summary}" for a in AGENTS.values()),
    )
    research.add_argument(
        "--max-iterations",
        type=_positive,
        help="deepsift: rounds at most (default: 1 on the embedded model, 3 on an endpoint)",
    )
    research.add_argument("--max-searches", type=_positive, help="search-o1: searches at most")
    research.add_argument(
        "--max-steps",
        type=_positive,
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

    ask = commands.add_parser(
        "ask",
        help="ask a finished run a follow-up question, or have its report rewritten "
        "(shorter, in German, as a table, add a section on X)",
        description="Without a question: the run's follow-ups so far.",
    )
    ask.add_argument("thread", metavar="THREAD_ID", help="the run's thread id")
    ask.add_argument("question", nargs="?", default="")
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
        "--version", type=_positive, help="the report version to print or write (1: the run's own)"
    )
    ask.set_defaults(run=run_ask)

    batch = commands.add_parser("batch", help="research every question of a JSONL file")
    batch.add_argument(
        "questions", type=Path, metavar="QUESTIONS.jsonl", help='lines {"id", "question"}'
    )
    batch.add_argument("-o", "--output", type=Path, required=True, metavar="ANSWERS.jsonl")
    batch.add_argument("--agent", choices=AGENTS, default="deepsift")
    batch.add_argument(
        "--concurrency",
        type=_positive,
        help="questions in flight at once (default: the endpoint's llm_concurrency, or the "
        "embedded model's local_slots)",
    )
    batch.add_argument("--collections", type=_names, help="comma-separated sources to search")
    batch.set_defaults(run=run_batch_command)

    graph = commands.add_parser("graph", help="print an agent's graph as a Mermaid diagram")
    graph.add_argument("--agent", choices=AGENTS, default="deepsift")
    graph.set_defaults(run=run_graph)

    serve = commands.add_parser("serve", help="the web app and its HTTP API")
    serve.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)"
    )
    serve.add_argument("--port", type=_positive, default=8000)
    serve.add_argument(
        "--token",
        nargs="?",
        const="",  # --token alone
        default=None,
        help="every request must carry it (required off loopback); without a value, a new random "
        "one, printed in the link (default: DEEPSIFT_SERVE_TOKEN; a value here shows in ps)",
    )
    serve.set_defaults(run=run_serve)

    mcp = commands.add_parser(
        "mcp", help="research, ingest and reports for MCP clients (assistants, editors), on stdio"
    )
    mcp.add_argument(
        "--allow",
        action="append",
        type=Path,
        metavar="FOLDER",
        help="a folder the ingest tool may read (again for more; besides the client's roots; "
        "setting mcp_ingest_folders)",
    )
    mcp.set_defaults(run=run_mcp)

    add_eval(commands)
    for name in ("ingest", "research", "ask", "batch", "collections", "eval", "serve", "mcp"):
        commands.choices[name].add_argument(
            "--wait",
            type=_seconds,
            metavar="SECONDS",
            help="wait this long for a Milvus Lite file another process holds (default: "
            "setting store_wait, 0: fail at once)",
        )
    return parser
