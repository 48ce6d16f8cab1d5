"""The package's shape: no import cycles between modules or packages, each part imports only the
parts below it, a few modules at the top, each shared text rule written once, nodes/ holds
nodes only, core commands stay light."""

import ast
import json
import re
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
    "deepsift.eval.summary",
    "starlette",
    "uvicorn",
    "mcp",
    "deepsift.serve.mcp",
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

    assert "deepsift.cli.research" in graph and "deepsift.api" in graph
    assert "deepsift.api" in graph["deepsift.cli.research"]  # imported inside run_research


def test_no_module_of_deepsift_imports_itself_through_others():
    graph = import_graph()

    found = cycles(graph)

    assert not found, "import cycles: " + "; ".join(_loop(graph, c) for c in found)


def _part(module: str) -> str:
    """The part of deepsift a module belongs to: its package, or itself when it is top-level."""
    return ".".join(module.split(".")[:2])


def part_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The import graph between the parts of deepsift (packages, top-level modules)."""
    parts: dict[str, set[str]] = {}
    for module, imported in graph.items():
        parts.setdefault(_part(module), set())
        parts[_part(module)] |= {_part(target) for target in imported} - {_part(module)}
    return parts


def test_the_part_graph_joins_a_package_into_one_part():
    graph = {"p.a.x": {"p.b.y"}, "p.b.y": {"p.c"}, "p.c": set(), "p.a.z": {"p.a.x"}}

    assert part_graph(graph) == {"p.a": {"p.b"}, "p.b": {"p.c"}, "p.c": set()}


def test_no_package_of_deepsift_imports_itself_through_others():
    graph = part_graph(import_graph())

    found = cycles(graph)

    assert not found, "package cycles: " + "; ".join(_loop(graph, c) for c in found)


# The parts of deepsift from the bottom up: each imports only parts of the layers below it, as
# each package's docstring says.
LAYERS = [
    {"errors", "records", "text", "prompts"},
    {"config"},
    {"llm"},
    {"store"},
    {"ingest"},
    {"web"},
    {"deps"},
    {"retrieval"},
    {"run"},
    {"report"},
    {"followups"},
    {"nodes"},
    {"agents"},
    {"graph"},
    {"api"},
    {"eval", "studio"},
    {"serve"},
    {"cli"},
    {"__main__", ""},  # "": the package's own __init__ (its lazy names)
]


def test_each_part_imports_only_the_parts_below_it():
    layer = {f"deepsift.{name}".rstrip("."): n for n, names in enumerate(LAYERS) for name in names}
    graph = part_graph(import_graph())

    assert set(graph) == set(layer), "a part of deepsift is missing from LAYERS, or is gone"
    upward = [
        f"{part} imports {target}"
        for part, imported in sorted(graph.items())
        for target in sorted(imported)
        if layer[target] >= layer[part]
    ]
    assert not upward, "imports of a part at or above the importer's layer: " + "; ".join(upward)


def test_a_few_modules_at_the_top_and_every_package_says_what_it_holds():
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    packages = [p for p in PACKAGE.rglob("__init__.py") if p.parent != PACKAGE]

    assert len(top) <= 12, f"{len(top)} modules directly under deepsift/: {top}"
    assert len(packages) >= 10
    for init in packages:
        docstring = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
        assert docstring and "import" in docstring.lower(), (
            f"{init}: say what it holds and may import"
        )


# Each shared text rule, by the pieces of its pattern, and its one home.
TEXT_RULES = {
    "sentences": ([r"(?<=[.!?])"], "deepsift/text/sentences.py"),
    "citation marks": ([r"\[\d", r"\[(\d"], "deepsift/text/marks.py"),
    "words": ([r"\w+", r"[^\W_]"], "deepsift/text/words.py"),
    "stopwords": (["whom whose", "how much many"], "deepsift/text/terms.py"),
    "stems": (["[:5]", "[:STEM]"], "deepsift/text/terms.py"),
    "term weights": (["log((1 +"], "deepsift/text/terms.py"),
    "scales of amounts": (['"billion": 1e9', '"million": 1e6'], "deepsift/text/amounts.py"),
    "a chunk's context line": (['split("\\n\\n", 1)'], "deepsift/records.py"),
    "sentence check chains": (
        [".unstated_cause(", ".wrong_comparison("],
        "deepsift/report/checks/run.py",
    ),
}
# Eval grades reports by rules of its own, never by the filters that wrote them (issue 58), so
# its copies of these rules are its own.
OWN_RULES = "deepsift/eval/"


@pytest.mark.parametrize("rule", TEXT_RULES)
def test_each_shared_text_rule_is_written_once(rule):
    fragments, home = TEXT_RULES[rule]
    written = sorted(
        str(path.relative_to(PACKAGE.parent))
        for path in PACKAGE.rglob("*.py")
        if any(fragment in path.read_text(encoding="utf-8") for fragment in fragments)
        and not str(path.relative_to(PACKAGE.parent)).startswith(OWN_RULES)
    )

    assert written == [home], f"{rule} ({', '.join(fragments)}) written in {written}"


def test_only_the_wiring_imports_the_nodes():
    graph = import_graph()

    importers = sorted(
        module
        for module, imported in graph.items()
        if not module.startswith("deepsift.nodes")
        and any(target.startswith("deepsift.nodes.") for target in imported)
    )

    assert importers == ["deepsift.graph"], f"nodes/ imported by {importers}"


# What only the retrieval package does: search the store, or follow its documents.
STORE_SEARCH = re.compile(r"store\.(?:search|opening|sources_containing)\(")


def test_only_the_retrieval_package_searches_the_store():
    searching = sorted(
        str(path.relative_to(PACKAGE.parent))
        for path in PACKAGE.rglob("*.py")
        if STORE_SEARCH.search(path.read_text(encoding="utf-8"))
    )

    assert searching and all(path.startswith("deepsift/retrieval/") for path in searching), (
        f"searches the store outside deepsift/retrieval: {searching}"
    )


NODE_LINES = 80
MODULE_LINES, FUNCTION_LINES = 400, 80


def test_no_module_or_function_is_too_long_to_read_at_once():
    long = []
    for path in PACKAGE.rglob("*.py"):
        source = path.read_text(encoding="utf-8")
        if len(source.splitlines()) > MODULE_LINES:
            long.append(f"{path.relative_to(PACKAGE)}: {len(source.splitlines())} lines")
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if (lines := node.end_lineno - node.lineno + 1) > FUNCTION_LINES:
                    long.append(f"{path.relative_to(PACKAGE)}:{node.name}: {lines} lines")

    assert not long, f"over {MODULE_LINES} lines a module or {FUNCTION_LINES} a function: {long}"


def test_every_node_is_a_short_adapter():
    long = {
        path.name: lines
        for path in (PACKAGE / "nodes").glob("*.py")
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > NODE_LINES
    }

    assert not long, f"nodes/ modules over {NODE_LINES} lines: {long}"


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
