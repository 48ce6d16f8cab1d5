"""Bad settings and arguments end with one line naming the setting (or flag) and what it
accepts, exit status 2, before any store or model is opened."""

import subprocess
import sys
import time
from pathlib import Path

import pytest

from deepsift.cli import main
from deepsift.config import Settings, SettingsError, load_settings
from deepsift.errors import UserError


def _fails(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """The one error line `deepsift ARGV` ends with (asserting exit status 2)."""
    with pytest.raises(SystemExit) as ended:
        main(argv)
    assert ended.value.code == 2
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), lines
    return lines[0]


@pytest.mark.parametrize(
    "variable, value, expected",
    [
        ("DEEPSIFT_TOP_K", "abc", ["top_k='abc'", "DEEPSIFT_TOP_K", "a whole number ≥ 1"]),
        ("DEEPSIFT_REPORT_LENGTH", "huge", ["DEEPSIFT_REPORT_LENGTH", "brief, standard, long"]),
        ("DEEPSIFT_MAX_ITERATIONS", "0", ["DEEPSIFT_MAX_ITERATIONS", "a whole number ≥ 1"]),
        ("DEEPSIFT_LLM_TIMEOUT", "0", ["DEEPSIFT_LLM_TIMEOUT", "a number > 0"]),
        ("DEEPSIFT_LLM_TIMEOUT", "nan", ["DEEPSIFT_LLM_TIMEOUT", "a number > 0"]),
        ("DEEPSIFT_LOCAL_CONTEXT", "512", ["DEEPSIFT_LOCAL_CONTEXT", "≥ 2048"]),
        ("DEEPSIFT_SEARCH_QUESTION", "maybe", ["DEEPSIFT_SEARCH_QUESTION", "true or false"]),
        ("DEEPSIFT_STORE_WAIT", "-5", ["DEEPSIFT_STORE_WAIT", "a number ≥ 0"]),
        ("DEEPSIFT_CHUNK_OVERLAP", "5000", ["chunk_overlap (5000)", "less than chunk_chars"]),
        # Unbounded, these allocated 298 GiB and kept 28% of a file (one 65,535-byte chunk).
        ("DEEPSIFT_TOP_K", "1000000000", ["DEEPSIFT_TOP_K", "≥ 1 and ≤ 100"]),
        ("DEEPSIFT_CHUNK_CHARS", "1000000", ["DEEPSIFT_CHUNK_CHARS", "≥ 200 and ≤ 8000"]),
        # Accepted until the first model call before.
        ("DEEPSIFT_LLM_BASE_URL", "notaurl", ["DEEPSIFT_LLM_BASE_URL", "http:// or https://"]),
        ("DEEPSIFT_EMBEDDING_BASE_URL", "http://", ["DEEPSIFT_EMBEDDING_BASE_URL", "with a host"]),
        ("DEEPSIFT_SEARXNG_URL", "ftp://x", ["DEEPSIFT_SEARXNG_URL", "http:// or https://"]),
    ],
)
def test_a_bad_environment_setting_is_one_line_naming_it_and_what_it_accepts(
    monkeypatch, capsys, variable, value, expected
):
    monkeypatch.setenv(variable, value)

    line = _fails(["collections"], capsys)

    assert all(part in line for part in expected), line


@pytest.mark.parametrize(
    "content, expected",
    [
        (b"top_k = [\n", "deepsift.toml is not valid TOML"),
        (b"top_k = 3\n\xff\xfe\n", "deepsift.toml is not UTF-8 text (byte 0xff at offset 10)"),
        (
            b'top_k = "many"\n',
            "top_k='many' (environment DEEPSIFT_TOP_K or top_k in deepsift.toml)",
        ),
    ],
)
def test_a_broken_deepsift_toml_is_one_line_naming_the_file(capsys, content, expected):
    Path("deepsift.toml").write_bytes(content)  # the test runs in its own folder

    line = _fails(["collections"], capsys)

    assert expected in line, line


@pytest.mark.parametrize("data_dir", ["FILE", "FILE/sub", "/proc/nope"])
def test_a_data_folder_that_is_a_file_or_cannot_be_made_is_one_line(
    monkeypatch, capsys, tmp_path, data_dir
):
    (tmp_path / "FILE").write_text("a file, not a folder")
    folder = data_dir if data_dir.startswith("/") else str(tmp_path / data_dir)
    monkeypatch.setenv("DEEPSIFT_DATA_DIR", folder)

    for argv in (["collections"], ["research", "q"]):
        line = _fails(argv, capsys)

        assert f"DEEPSIFT_DATA_DIR: cannot use {folder} as a folder" in line, line
    assert (tmp_path / "FILE").read_text() == "a file, not a folder"


def test_a_mistyped_variable_or_toml_key_is_a_warning_naming_the_closest_setting(
    monkeypatch, caplog
):
    monkeypatch.setenv("DEEPSIFT_TOPK", "3")
    monkeypatch.setenv("DEEPSIFT_ZZZ", "1")
    Path("deepsift.toml").write_text("max_iteration = 2\ntop_k = 4\n")  # its own folder

    with caplog.at_level("WARNING", logger="deepsift.config"):
        settings = load_settings()

    assert settings.top_k == 4
    assert [r.getMessage() for r in caplog.records] == [
        "DEEPSIFT_TOPK is no setting and is ignored; did you mean DEEPSIFT_TOP_K?",
        "DEEPSIFT_ZZZ is no setting and is ignored",
        "deepsift.toml: max_iteration is no setting and is ignored; did you mean max_iterations?",
    ]


@pytest.mark.parametrize(
    "argv, expected",
    [
        (["research", "q", "--max-iterations", "0"], "argument --max-iterations: expected a whole"),
        (["research", "q", "--max-searches", "two"], "argument --max-searches: expected a whole"),
        (["batch", "q.jsonl", "-o", "a.jsonl", "--concurrency", "0"], "argument --concurrency"),
        (["collections", "--wait", "-1"], "argument --wait: expected seconds ≥ 0"),
        (["ingest", "x", "--collection", "c", "--wait", "soon"], "argument --wait"),
        (["research"], "give a question"),
        (["research", " \t "], "give a question"),
    ],
)
def test_a_bad_argument_is_one_line_naming_the_flag(capsys, argv, expected):
    assert expected in _fails(argv, capsys)


NUMBERS = {int: 1, float: 1.0}


@pytest.mark.parametrize(
    "name",
    [n for n, f in Settings.model_fields.items() if f.annotation in NUMBERS],
)
def test_every_numeric_setting_has_a_range_and_out_of_it_names_the_range(name):
    field = Settings.model_fields[name]
    (bound,) = [rule for rule in field.metadata if hasattr(rule, "ge") or hasattr(rule, "gt")]
    low = bound.ge - 1 if hasattr(bound, "ge") else bound.gt

    with pytest.raises(SettingsError) as error:
        load_settings(**{name: low})

    rule = f"≥ {bound.ge:g}" if hasattr(bound, "ge") else f"> {bound.gt:g}"
    assert f"DEEPSIFT_{name.upper()}" in str(error.value) and rule in str(error.value)


@pytest.mark.parametrize(
    "name",
    [n for n, f in Settings.model_fields.items() if f.annotation in NUMBERS],
)
def test_every_numeric_setting_has_a_ceiling_and_above_it_names_it(name):
    field = Settings.model_fields[name]
    (ceiling,) = [rule.le for rule in field.metadata if hasattr(rule, "le")]

    with pytest.raises(SettingsError) as error:
        load_settings(**{name: ceiling + 1})

    assert f"DEEPSIFT_{name.upper()}" in str(error.value) and f"≤ {ceiling}" in str(error.value)


@pytest.mark.parametrize(
    "argv",
    [
        ["ingest", "x", "--collection", "c"],
        ["research", "q"],
        ["batch", "q.jsonl", "-o", "a.jsonl"],
        ["collections"],
        ["eval", "retrieval"],
    ],
)
def test_wait_sets_store_wait_for_every_command_that_opens_the_store(monkeypatch, capsys, argv):
    monkeypatch.setenv("DEEPSIFT_STORE_WAIT", "4")
    waits = []

    def loaded(**given):  # the command's settings, then stop before it runs
        waits.append(load_settings(**given).store_wait)
        raise UserError("stopped")

    monkeypatch.setattr("deepsift.cli.load_settings", loaded)
    _fails([*argv, "--wait", "2.5"], capsys)
    _fails(argv, capsys)

    assert waits == [2.5, 4.0]


def test_bad_settings_and_arguments_stop_before_any_store_or_model_is_loaded(tmp_path):
    """In one fresh process: every kind of mistake above, then which heavy modules got loaded."""
    script = """
import os, sys
from pathlib import Path
from deepsift.cli import main
cases = [
    ({"DEEPSIFT_TOP_K": "abc"}, ["research", "q"]),
    ({}, ["research", "q", "--max-iterations", "0"]),
    ({}, ["research", "   "]),
    ({}, ["batch", "q.jsonl", "-o", "a.jsonl", "--concurrency", "0"]),
    ({"TOML": "top_k = ["}, ["research", "q"]),
]
for env, argv in cases:
    toml = env.pop("TOML", None)
    if toml:
        Path("deepsift.toml").write_text(toml)
    os.environ.update(env)
    try:
        main(argv)
    except SystemExit as e:
        assert e.code == 2, (argv, e.code)
    for key in env:
        del os.environ[key]
    Path("deepsift.toml").unlink(missing_ok=True)
heavy = ["onnxruntime", "xllamacpp", "pymilvus", "langchain_openai", "langgraph", "numpy"]
print("loaded:", [m for m in heavy if m in sys.modules])
"""
    started = time.monotonic()
    ran = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
        timeout=60,
    )

    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == "loaded: []", ran.stdout
    assert ran.stderr.count("error: ") == 5 and "Traceback" not in ran.stderr
    assert time.monotonic() - started < 10
