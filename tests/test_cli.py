import argparse
import json
import re
import shutil
import subprocess
import sys
import time
from importlib.metadata import entry_points, version
from pathlib import Path

import pytest

import deepsift.cli
from deepsift.llm.local_model import free_port

from conftest import CORPUS, run_cli
from fake_openai import FakeOpenAI
from scripted import SUB_QUERIES, ScriptedReAct, ScriptedResearcher, ScriptedSearchO1


def _ingest_sample_corpus(data: Path) -> None:
    for name in ("science", "operations"):
        result = run_cli(
            "ingest",
            str(CORPUS / name),
            "--collection",
            name,
            "--description",
            f"{name} documents",
            data=data,
        )
        assert result.returncode == 0, result.stderr


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data dir holding the sample corpus in two collections, ingested once through the CLI."""
    data = tmp_path_factory.mktemp("cli") / "data"
    _ingest_sample_corpus(data)
    return data


def test_unreachable_llm_endpoint_is_one_line_naming_the_url_with_exit_2(data):
    url = f"http://127.0.0.1:{free_port()}/v1"
    started = time.monotonic()

    result = run_cli("research", "What is Kestrel Works?", data=data, DEEPSIFT_LLM_BASE_URL=url)

    assert time.monotonic() - started < 30
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:"), result.stderr
    assert url in lines[0]


def test_research_json_has_the_documented_shape_and_writes_the_report(data, scripted_llm):
    report = data.parent / "report.md"

    result = run_cli(
        "research",
        "Why was Kestrel Works built and what did it cost?",
        "--json",
        "-o",
        str(report),
        data=data,
        DEEPSIFT_LLM_BASE_URL=scripted_llm.url,
        DEEPSIFT_LLM_API_KEY="k",
    )

    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert set(answer) >= {"question", "report", "sources", "sub_queries", "iterations", "usage"}
    usage = answer["usage"]
    assert set(usage) == {
        "llm_calls",
        "prompt_tokens",
        "completion_tokens",
        "cached_tokens",
        "claims_checked",
        "claims_rewritten",
        "claims_dropped",
        "seconds",
        "steps",
    }
    assert usage["llm_calls"] == len(scripted_llm.requests)
    # The sections share their system prompt, which the server reports as cached.
    assert 0 < usage["cached_tokens"] < usage["prompt_tokens"]
    # Every step is accounted for: the steps' calls and tokens add up to the run's.
    steps = usage["steps"]
    assert {"decompose", "route", "search", "reflect", "synthesize"} <= set(steps)
    for field in ("llm_calls", "prompt_tokens", "completion_tokens"):
        assert sum(cost[field] for cost in steps.values()) == usage[field] > 0
    assert steps["search"]["llm_calls"] == 0 and steps["synthesize"]["llm_calls"] >= 2
    assert 0 < sum(cost["seconds"] for cost in steps.values())
    assert all(set(s) == {"n", "title", "source"} for s in answer["sources"])
    assert report.read_text() == answer["report"]
    assert "## Sources" in answer["report"]


def test_research_shows_each_step_while_it_runs(data, scripted_llm):
    result = run_cli(
        "research",
        "Why was Kestrel Works built?",
        data=data,
        DEEPSIFT_LLM_BASE_URL=scripted_llm.url,
        DEEPSIFT_LLM_API_KEY="k",
    )

    assert result.returncode == 0, result.stderr
    for step in ("sub-queries", "route", "search", "reflect", "report"):
        assert step in result.stderr
    assert "Sources" in result.stdout


def test_collections_json_lists_exactly_the_documented_keys_and_drop_removes(tmp_path):
    data = tmp_path / "data"
    _ingest_sample_corpus(data)
    listing = json.loads(run_cli("collections", "--json", data=data).stdout)

    assert [c["name"] for c in listing] == ["operations", "science"]
    assert all(
        set(c) == {"name", "description", "documents", "chunks", "embedding_model"} for c in listing
    )
    assert {c["documents"] for c in listing} == {5}
    assert listing[1]["description"] == "science documents"

    assert run_cli("collections", "drop", "science", data=data).returncode == 0
    after = json.loads(run_cli("collections", "--json", data=data).stdout)
    assert [c["name"] for c in after] == ["operations"]


def test_an_error_with_brackets_is_printed_as_written(tmp_path):
    """Brackets are not console markup: "pip install -e '.[local]'" and "x[bold]y" stay whole."""
    result = run_cli("collections", "drop", "x[bold]y", data=tmp_path / "data")

    assert result.returncode == 2
    assert "no collection named 'x[bold]y'" in result.stderr


def test_dropping_an_unknown_collection_is_a_clear_error(data):
    result = run_cli("collections", "drop", "nope", data=data)

    assert result.returncode == 2
    assert result.stderr.strip() == "error: no collection named 'nope': see `deepsift collections`"


def test_an_invalid_setting_names_the_setting(data):
    result = run_cli("collections", data=data, DEEPSIFT_MAX_ITERATIONS="many")

    assert result.returncode == 2
    assert "max_iterations" in result.stderr and "Traceback" not in result.stderr


def test_a_milvus_lite_file_held_by_another_process_is_a_clear_error(tmp_path):
    data = tmp_path / "data"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import time; from deepsift.config import Settings; "
            "from deepsift.store import Store; "
            f"Store(Settings(data_dir={str(data)!r})); print('open', flush=True); time.sleep(60)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "open"
        result = run_cli("collections", data=data)
    finally:
        holder.kill()
        holder.wait()

    assert result.returncode == 2
    assert (
        result.stderr.startswith("error: the Milvus Lite database")
        and "in use by another process" in result.stderr
    )
    assert "Traceback" not in result.stderr and result.stderr.count("\n") == 1
    # It names the holder, and how to run both.
    assert f"in use by another process (pid {holder.pid}: " in result.stderr
    assert "deepsift serve shares the file" in result.stderr


def _searched_queries(stderr: str) -> list[str]:
    return re.findall(r"chunks for “(.+?)”", stderr)


def test_review_edits_a_sub_query_and_the_edited_query_is_searched(data, scripted_llm):
    edited = "Kestrel Works construction reasons"

    result = run_cli(
        "research",
        "Why was Kestrel Works built and what did it cost?",
        "--review",
        "--max-iterations",
        "1",
        "--length",
        "brief",
        "--json",
        data=data,
        stdin=f"e 1 {edited}\nd 3\n\n",
        DEEPSIFT_LLM_BASE_URL=scripted_llm.url,
        DEEPSIFT_LLM_API_KEY="k",
    )

    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert answer["status"] == "done"
    assert answer["sub_queries"] == [edited, SUB_QUERIES[1]]
    searched = _searched_queries(result.stderr)
    assert edited in searched and SUB_QUERIES[0] not in searched and SUB_QUERIES[2] not in searched
    fixed = {"Key findings", "Documents", "Conclusion", "Notes", "Sources"}
    sections = [h for h in re.findall(r"^## (.*)$", answer["report"], re.M) if h not in fixed]
    assert sections  # a report was written from what was searched


def test_a_run_paused_for_review_resumes_from_its_thread_in_a_new_process(data, scripted_llm):
    env = {"DEEPSIFT_LLM_BASE_URL": scripted_llm.url, "DEEPSIFT_LLM_API_KEY": "k"}
    question = "Why was Kestrel Works built and what did it cost?"

    paused = run_cli("research", question, "--review", "--json", data=data, stdin="", **env)

    assert paused.returncode == 0, paused.stderr
    first = json.loads(paused.stdout)
    assert first["status"] == "paused" and first["report"] == ""
    assert "resume with: deepsift research --thread " + first["thread_id"] in paused.stderr
    assert _searched_queries(paused.stderr) == []
    calls_before = len(scripted_llm.requests)

    resumed = run_cli(
        "research", "--thread", first["thread_id"], "--json", data=data, stdin="d 1\n\n", **env
    )

    assert resumed.returncode == 0, resumed.stderr
    answer = json.loads(resumed.stdout)
    assert answer["status"] == "done" and "## Sources" in answer["report"]
    assert answer["sub_queries"][:2] == SUB_QUERIES[1:]
    # Decompose and route ran before the pause; resuming does not ask them again.
    schemas = [r["response_format"]["json_schema"]["name"] for r in scripted_llm.requests]
    assert "SubQueries" not in schemas[calls_before:] and "Routing" in schemas[:calls_before]


def test_runs_lists_every_run_with_its_status_and_follow_ups_newest_first(data, scripted_llm):
    env = {"DEEPSIFT_LLM_BASE_URL": scripted_llm.url, "DEEPSIFT_LLM_API_KEY": "k"}
    question = "Why was Kestrel Works built and what did it cost?"
    done = json.loads(run_cli("research", question, "--json", data=data, **env).stdout)
    asked = run_cli(
        "ask", done["thread_id"], "What did Kestrel Works cost in the end?", data=data, **env
    )
    assert asked.returncode == 0, asked.stderr
    paused = run_cli("research", question, "--review", "--json", data=data, stdin="", **env)
    paused_id = json.loads(paused.stdout)["thread_id"]

    listed = run_cli("runs", "--json", data=data)
    table = run_cli("runs", data=data)

    assert listed.returncode == table.returncode == 0, listed.stderr + table.stderr
    runs = json.loads(listed.stdout)
    assert all(
        set(run) == {"thread_id", "question", "started", "status", "followups", "agent"}
        for run in runs
    )
    by_id = {run["thread_id"]: run for run in runs}
    assert by_id[done["thread_id"]] | {"started": ""} == {
        "thread_id": done["thread_id"],
        "question": question,
        "started": "",
        "status": "done",
        "followups": 1,
        "agent": "deepsift",
    }
    assert by_id[paused_id]["status"] == "paused" and by_id[paused_id]["followups"] == 0
    assert [run["started"] for run in runs] == sorted(
        (run["started"] for run in runs), reverse=True
    )
    assert runs.index(by_id[paused_id]) < runs.index(by_id[done["thread_id"]])
    assert done["thread_id"] in table.stdout and paused_id in table.stdout


def test_runs_on_a_fresh_data_folder_says_how_to_start_one(tmp_path):
    listed = run_cli("runs", "--json", data=tmp_path / "data")
    table = run_cli("runs", data=tmp_path / "data")

    assert listed.returncode == table.returncode == 0, listed.stderr + table.stderr
    assert json.loads(listed.stdout) == []
    assert "no runs yet: deepsift research" in table.stdout


def test_asking_an_unknown_thread_id_points_to_deepsift_runs(data):
    result = run_cli("ask", "nosuchthread", "What did it cost?", data=data)

    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "deepsift runs" in result.stderr, result.stderr


def test_graph_prints_the_mermaid_diagram_with_the_review_step(tmp_path):
    result = run_cli("graph", data=tmp_path / "data")

    assert result.returncode == 0, result.stderr
    assert result.stdout.lstrip().startswith("---") and "graph TD;" in result.stdout
    for edge in (
        "decompose --> route;",
        "route -.-> review;",
        "search --> hop;",
        "hop --> reflect;",
    ):
        assert edge in result.stdout


def test_web_without_a_tavily_key_is_one_line_with_exit_2(data, scripted_llm):
    result = run_cli(
        "research",
        "What is Kestrel Works?",
        "--web",
        data=data,
        DEEPSIFT_LLM_BASE_URL=scripted_llm.url,
        DEEPSIFT_LLM_API_KEY="k",
    )

    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "needs a Tavily API key" in lines[0], result.stderr
    assert scripted_llm.requests == []


def test_search_o1_prints_the_same_json_shape_with_its_answer(data):
    with FakeOpenAI(ScriptedSearchO1(["Kestrel Works budget"])) as llm:
        result = run_cli(
            "research",
            "What did Kestrel Works cost?",
            "--agent",
            "search-o1",
            "--json",
            data=data,
            DEEPSIFT_LLM_BASE_URL=llm.url,
            DEEPSIFT_LLM_API_KEY="k",
        )

    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert answer["agent"] == "search-o1" and answer["answer"] == "Marrowby"
    assert answer["sub_queries"] == ["Kestrel Works budget"] and answer["iterations"] == 1
    assert answer["sources"] and "## Sources" in answer["report"]
    assert "searching for “Kestrel Works budget”" in result.stderr


REACT_REPLIES = [
    "Thought: I need the budget.\nAction: search[Kestrel Works capital budget]",
    "Thought: 24.6 million [1], contingency 1.8 million.\nAction: calculate[1.8 / 24.6 * 100]",
    "Thought: That is the share.\nAction: finish[7.3%]",
]


def test_react_prints_the_same_json_shape_with_its_answer_and_trace(data):
    with FakeOpenAI(ScriptedReAct(REACT_REPLIES)) as llm:
        result = run_cli(
            "research",
            "What share of the Kestrel Works budget was contingency?",
            "--agent",
            "react",
            "--max-steps",
            "5",
            "--json",
            data=data,
            DEEPSIFT_LLM_BASE_URL=llm.url,
            DEEPSIFT_LLM_API_KEY="k",
        )

    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert answer["agent"] == "react" and answer["answer"] == "7.3%"
    assert answer["answered_by"] == "react" and answer["votes"] == {}
    assert [s["action"] for s in answer["trace"]] == ["search", "calculate", "finish"]
    assert answer["trace"][1]["observation"] == "7.317073171"
    assert answer["sources"] and "## Sources" in answer["report"]
    assert "calculate 7.317073171" in result.stderr and "search[Kestrel Works" in result.stderr


def test_batch_answers_with_the_react_agent(data, tmp_path):
    questions = tmp_path / "q.jsonl"
    questions.write_text('{"id": "k", "question": "What share was contingency?"}\n')
    answers = tmp_path / "a.jsonl"

    with FakeOpenAI(ScriptedReAct(REACT_REPLIES)) as llm:
        result = run_cli(
            "batch",
            str(questions),
            "-o",
            str(answers),
            "--agent",
            "react",
            data=data,
            DEEPSIFT_LLM_BASE_URL=llm.url,
            DEEPSIFT_LLM_API_KEY="k",
        )

    assert result.returncode == 0, result.stderr
    (row,) = map(json.loads, answers.read_text().splitlines())
    assert (row["id"], row["agent"], row["answer"], row["error"]) == ("k", "react", "7.3%", None)


def test_help_lists_every_command_including_eval(tmp_path):
    result = run_cli("--help", data=tmp_path / "data")

    assert result.returncode == 0, result.stderr
    for command in ("ingest", "collections", "research", "batch", "graph", "eval"):
        assert re.search(rf"^\s+{command}\s", result.stdout, re.MULTILINE), result.stdout


def test_every_argument_of_every_command_has_help():
    parser = deepsift.cli._parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    parsers = {"deepsift": parser, **commands.choices}

    missing = [
        f"{name} {action.option_strings or action.dest}"
        for name, command in parsers.items()
        for action in command._actions
        if not action.help
    ]

    assert missing == []


def test_version_prints_the_installed_version(tmp_path):
    result = run_cli("--version", data=tmp_path / "data")

    assert result.returncode == 0
    assert result.stdout.strip() == f"deepsift {version('deepsift')}"


@pytest.mark.parametrize(
    "argv, meant", [(["reserch", "Q"], "research"), (["research", "--agent", "reac", "Q"], "react")]
)
def test_a_mistyped_command_or_choice_suggests_the_closest_one(tmp_path, argv, meant):
    result = run_cli(*argv, data=tmp_path / "data")

    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and f"did you mean {meant}?" in result.stderr


def test_a_refused_collection_name_is_told_its_valid_spelling(tmp_path):
    result = run_cli("ingest", str(CORPUS / "science"), "--collection", "my-frogs", data=tmp_path)

    assert result.returncode == 2
    assert "invalid" in result.stderr and result.stderr.rstrip().endswith("e.g. my_frogs")


def test_a_missing_folder_is_exit_2_and_creates_nothing_to_describe(tmp_path):
    data = tmp_path / "data"
    missing = run_cli("ingest", str(tmp_path / "nofolder"), "--collection", "frogs", data=data)
    listed = run_cli("collections", "--json", data=data)
    ingested = run_cli("ingest", str(CORPUS / "science"), "--collection", "frogs", data=data)

    assert missing.returncode == 2
    assert missing.stderr.count("\n") == 1 and "no such file or folder" in missing.stderr
    assert "description" not in missing.stderr
    assert json.loads(listed.stdout) == []
    assert ingested.returncode == 0, ingested.stderr
    assert "note: frogs has no description" in ingested.stderr


def test_asking_an_empty_question_is_an_error_not_the_list(data, scripted_llm):
    env = {"DEEPSIFT_LLM_BASE_URL": scripted_llm.url, "DEEPSIFT_LLM_API_KEY": "k"}
    question = "Why was Kestrel Works built and what did it cost?"
    thread = json.loads(run_cli("research", question, "--json", data=data, **env).stdout)
    thread_id = thread["thread_id"]

    empty = run_cli("ask", thread_id, "  ", data=data, **env)
    listed = run_cli("ask", thread_id, data=data, **env)

    assert empty.returncode == 2 and empty.stderr.count("\n") == 1
    assert "the question is empty" in empty.stderr and question not in empty.stderr
    assert listed.returncode == 0 and question in listed.stderr


def _manual() -> str:
    """The docs pages (docs/*.md), where the command line is documented."""
    docs = Path(deepsift.cli.__file__).parents[2] / "docs"
    return "\n".join(page.read_text() for page in sorted(docs.glob("*.md")))


def _documented_keys(opening: str) -> list[str]:
    """The keys the docs list for a `--json` object that opens with `opening`, outermost
    only ("usage: {...}" is usage)."""
    found = re.search(r"`--json` prints `\{(" + re.escape(opening) + r".*?)\}`", _manual(), re.S)
    assert found, opening
    text = found[1]
    while re.search(r"\{[^{}]*\}|\[[^\[\]]*\]", text):
        text = re.sub(r"\{[^{}]*\}|\[[^\[\]]*\]", "", text)
    return [key.split(":")[0].strip() for key in text.split(",")]


def test_every_json_key_of_research_and_ask_is_documented():
    from deepsift.api import FollowUpResult, ResearchResult, RunUsage

    usage = re.search(r"usage: \{(llm_calls[^}]*)\}", _manual())[1]

    assert sorted(_documented_keys("agent, status")) == sorted(ResearchResult.model_fields)
    assert sorted(_documented_keys("thread_id, question, kind")) == sorted(
        FollowUpResult.model_fields
    )
    assert sorted(k.strip() for k in usage.split(",")) == sorted(RunUsage.model_fields)


@pytest.mark.skipif(not shutil.which("make"), reason="needs make")
def test_make_demo_ends_with_the_commands_that_go_on_from_it():
    root = Path(deepsift.cli.__file__).parents[2]
    dry = subprocess.run(["make", "-n", "demo"], cwd=root, capture_output=True, text=True)
    parser = deepsift.cli._parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))

    told = [line for line in dry.stdout.splitlines() if line.startswith('echo "  ')]
    named = [found[1] for line in told if (found := re.search(r"  deepsift (\w+)", line))]

    assert dry.returncode == 0, dry.stderr
    assert any("/activate" in line for line in told)
    assert any(f"DEEPSIFT_DATA_DIR={root}/.deepsift-demo" in line for line in told)
    assert {"runs", "ask", "serve"} <= set(named) <= set(commands.choices)


def test_the_console_script_points_at_deepsift_cli_main():
    (script,) = entry_points(group="console_scripts", name="deepsift")

    assert script.load() is deepsift.cli.main


def test_eval_reports_scores_each_report_and_writes_the_table(data, tmp_path):
    questions = tmp_path / "q.jsonl"
    questions.write_text(
        '{"id": "kestrel", "question": "Why was Kestrel Works built?"}\n'
        '{"id": "short", "question": "What did Kestrel Works cost?", "length": "brief"}\n'
    )
    with FakeOpenAI(ScriptedResearcher(false_figure="It cost €99.9m.", rewrite_fails=True)) as llm:
        result = run_cli(
            "eval", "reports", "--questions", str(questions), "--out", str(tmp_path / "out"),
            data=data, DEEPSIFT_LLM_BASE_URL=llm.url, DEEPSIFT_LLM_API_KEY="k",
        )  # fmt: skip

    assert result.returncode == 0, result.stderr
    rows = {r["id"]: r for r in map(json.loads, (tmp_path / "out/reports.jsonl").open())}
    assert set(rows) == {"kestrel", "short"}
    for row in rows.values():
        assert row["claim_pass"] == 1.0 and row["unheld_numbers"] == 0  # 99.9 was dropped
        assert row["sections"] >= 1 and row["documents"] >= 1 and 0 < row["cited_share"] <= 1
    assert rows["short"]["words"] < rows["kestrel"]["words"]
    report = (tmp_path / "out/reports/kestrel.md").read_text()
    assert "## Sources" in report and "99.9" not in report
    assert "| **mean** |" in result.stdout
