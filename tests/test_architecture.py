"""The package's shape: no import cycles, nodes/ holds nodes only, core commands stay light."""

import ast
import json
import subprocess
import sys
import typing
from inspect import signature
from pathlib import Path

import pytest

PACKAGE = Path(__file__).parent.parent / "deepsift"
HEAVY = (
    "trafilatura",
    "tavily",
    "matplotlib",
    "deepsift.eval.runner",
    "deepsift.eval.report",
    "starlette",
    "uvicorn",
    "mcp",
    "deepsift.mcp_server",
)


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported(tree: ast.AST, module: str, is_package: bool, modules: set[str]) -> set[str]:
    """The deepsift modules that `module` imports anywhere in its source, functions included;
    `from deepsift.x import y` is deepsift.x.y when that is a module, else deepsift.x."""
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = module.split(".")
                anchor = parts[: len(parts) - node.level + is_package]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                candidate = f"{base}.{alias.name}"
                names.append(candidate if candidate in modules else base)
    found = set()
    for name in names:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        if name:
            found.add(name)
    return found


def import_graph() -> dict[str, set[str]]:
    paths = {_module_name(path): path for path in PACKAGE.rglob("*.py")}
    graph = {}
    for module, path in paths.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        imported = _imported(tree, module, path.name == "__init__.py", set(paths))
        graph[module] = imported - {module}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    components = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for target in graph[module]:
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == module:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return components


def _loop(graph: dict[str, set[str]], component: list[str]) -> str:
    """One import loop through the component's first module, as `a -> b -> a`."""
    start = component[0]
    paths = {start: [start]}
    queue = [start]
    while queue:
        module = queue.pop(0)
        for target in sorted(graph[module] & set(component)):
            if target == start:
                return " -> ".join([*paths[module], start])
            if target not in paths:
                paths[target] = [*paths[module], target]
                queue.append(target)
    raise AssertionError(f"{component} is not a cycle")


def test_the_cycle_finder_finds_a_cycle_and_passes_a_chain():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}

    assert cycles(graph) == [["a", "b", "c"]]
    assert _loop(graph, ["a", "b", "c"]) == "a -> b -> c -> a"
    assert cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_the_import_graph_sees_imports_inside_functions():
    graph = import_graph()

    assert "deepsift.cli" in graph and "deepsift.cli.console" in graph
    assert "deepsift.eval.command" in graph["deepsift.cli"]  # imported inside _parser
    assert "deepsift.cli.console" in graph["deepsift.eval.command"]


def test_no_module_of_deepsift_imports_itself_through_others():
    graph = import_graph()

    found = cycles(graph)

    assert not found, "import cycles: " + "; ".join(_loop(graph, c) for c in found)


def _node_names() -> set[str]:
    from deepsift.graph import _wire, build_graph

    finishes = typing.get_args(signature(build_graph).parameters["finish"].annotation)
    assert finishes, "build_graph's finish is no longer a Literal of its last steps"
    return {name for finish in finishes for name in _wire(None, finish).nodes}


def test_every_module_in_nodes_is_a_node_of_the_research_graph():
    modules = {p.stem for p in (PACKAGE / "nodes").glob("*.py") if p.stem != "__init__"}
    nodes = _node_names()

    assert modules and {"decompose", "synthesize", "answer"} <= nodes
    assert modules <= nodes, f"not graph nodes, so not for nodes/: {sorted(modules - nodes)}"


PROBE = """
import json, sys
from deepsift.cli import main
try:
    main(sys.argv[2:])
except SystemExit as e:
    code = e.code
else:
    code = 0
heavy = [m for m in sys.modules if m in HEAVY or m.startswith("deepsift.web.")]
with open(sys.argv[1], "w") as f:
    json.dump({"code": code, "heavy": sorted(heavy)}, f)
"""


@pytest.mark.parametrize(
    "command",
    [["--help"], ["collections", "--json"], ["graph"], ["ingest", "NOTE", "--collection", "notes"]],
    ids=["help", "collections", "graph", "ingest"],
)
def test_core_commands_load_neither_the_web_nor_the_eval_stack(tmp_path, command):
    note = tmp_path / "note.md"
    note.write_text("# Kestrel Works\n\nA small foundry by the river.\n", encoding="utf-8")
    result = tmp_path / "result.json"
    argv = [str(note) if arg == "NOTE" else arg for arg in command]
    environment = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "DEEPSIFT_DATA_DIR": str(tmp_path / "data"),
    }

    process = subprocess.run(
        [sys.executable, "-c", f"HEAVY = {HEAVY!r}\n{PROBE}", str(result), *argv],
        capture_output=True,
        text=True,
        env=environment,
        cwd=tmp_path,
        timeout=300,
    )

    assert process.returncode == 0, process.stderr
    probe = json.loads(result.read_text())
    assert probe["code"] == 0, process.stderr
    assert probe["heavy"] == [], f"deepsift {' '.join(command)} imported {probe['heavy']}"
