"""The `deepsift` command: the top-level parser and its flags, and one module per command beside
it, each declaring its own arguments (`add_parser`) and running the command.

Each command imports what it needs when it runs, so `deepsift --help`, `collections`, `ingest`
and `graph` load neither the web stack nor the evaluation stack.

May import anything; nothing imports it but __main__.
"""

import argparse
import difflib
import logging
import re
import sys
from importlib.metadata import version
from typing import NoReturn

from rich.markup import escape

from deepsift.cli import ask, batch, collections, graph, ingest, mcp, research, runs, serve
from deepsift.cli import eval as evaluation
from deepsift.cli.arguments import seconds
from deepsift.cli.console import err
from deepsift.config import load_settings
from deepsift.errors import UserError

# In the order `deepsift --help` lists them.
COMMANDS = (ingest, collections, research, ask, runs, batch, graph, serve, mcp, evaluation)
# The commands that open the store, so may wait for a Milvus Lite file another process holds.
WAITING = ("ingest", "research", "ask", "batch", "collections", "eval", "serve", "mcp")


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
            f"[red]error:[/red] {self.prog}: {escape(message)}{_did_you_mean(message)} "
            f"(see {self.prog} --help)",
            highlight=False,
            soft_wrap=True,
        )
        sys.exit(2)


def _did_you_mean(message: str) -> str:
    """For a mistyped choice (a command, an agent), the closest valid one."""
    found = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
    if not found:
        return ""
    choices = [choice.strip(" '") for choice in found[2].split(",")]
    close = difflib.get_close_matches(found[1], choices, n=1)
    return f"; did you mean {close[0]}?" if close else ""


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="deepsift", description="Deep research over your Milvus collections.")
    parser.add_argument("--version", action="version", version=f"deepsift {version('deepsift')}")
    commands = parser.add_subparsers(
        required=True, metavar="COMMAND", help="deepsift COMMAND --help: its arguments"
    )
    for command in COMMANDS:
        command.add_parser(commands)
    for name in WAITING:
        commands.choices[name].add_argument(
            "--wait",
            type=seconds,
            metavar="SECONDS",
            help="wait this long for a Milvus Lite file another process holds (default: "
            "setting store_wait, 0: fail at once)",
        )
    return parser
