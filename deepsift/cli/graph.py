"""`deepsift graph`: an agent's graph as a Mermaid diagram."""

import argparse

from deepsift.agents import AGENTS
from deepsift.config import Settings


def add_parser(commands: argparse._SubParsersAction) -> None:
    graph = commands.add_parser("graph", help="print an agent's graph as a Mermaid diagram")
    graph.add_argument(
        "--agent",
        choices=AGENTS,
        default="deepsift",
        help="the agent whose graph (default: deepsift)",
    )
    graph.set_defaults(run=run_graph)


def run_graph(args: argparse.Namespace, settings: Settings) -> int:
    # Drawn without a store or a model.
    print(AGENTS[args.agent].build(None).get_graph().draw_mermaid())
    return 0
