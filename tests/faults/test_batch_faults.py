"""Batch under faults: bad input files, and kills (SIGKILL) at random points."""

import json
import multiprocessing
import os
import random
import signal
import time
from pathlib import Path

import pytest

from deepsift.cli import main

from conftest import CORPUS
from fake_openai import FakeOpenAI
from scripted import ScriptedResearcher

# Killed runs are processes forked from a server that imported deepsift once: a fresh
# `python -m deepsift` spends seconds on imports before the point worth killing.
FORKS = multiprocessing.get_context("forkserver")
FORKS.set_forkserver_preload(["deepsift.cli", "deepsift.api.batch", "deepsift.cli.eval"])


def _deepsift(argv: list[str], env: dict[str, str], cwd: str) -> None:
    for key in [k for k in os.environ if k.startswith("DEEPSIFT_")]:
        del os.environ[key]
    os.environ.update(env)
    os.chdir(cwd)
    log = os.open("deepsift.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    os.dup2(log, 1)
    os.dup2(log, 2)
    main(argv)


def forked(argv: list[str], env: dict[str, str], cwd: Path) -> multiprocessing.Process:
    """`deepsift ARGV` started in a forked process in `cwd`, with only `env`'s DEEPSIFT_*
    settings, writing to cwd/deepsift.log."""
    process = FORKS.Process(target=_deepsift, args=(argv, env, str(cwd)))
    process.start()
    return process


def run_forked(argv: list[str], env: dict[str, str], cwd: Path) -> int:
    """`deepsift ARGV` run to its end; its exit code. (A store opened in this process would
    stay locked by its Milvus Lite server until the tests end.)"""
    process = forked(argv, env, cwd)
    process.join()
    return process.exitcode


def kill_at_random_points(
    argv: list[str],
    env: dict[str, str],
    cwd: Path,
    output: Path,
    lines: int,
    rng: random.Random,
    kills: int = 3,
) -> list[int]:
    """Run `deepsift ARGV` `kills` times, each killed with SIGKILL at a random point before
    `output` holds `lines` lines; returns the lines each kill left."""
    left = []
    for target in sorted(rng.sample(range(lines - 3), kills)):  # leave some in flight or to go
        process = forked(argv, env, cwd)
        deadline = time.monotonic() + 60
        while process.is_alive() and count_lines(output) < target and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(rng.uniform(0, 0.1))
        process.kill()  # SIGKILL; nothing if the run has finished
        process.join()
        assert process.exitcode in (-signal.SIGKILL, 0), (cwd / "deepsift.log").read_text()
        left.append(count_lines(output))
    return left


def count_lines(path: Path) -> int:
    return path.read_text().count("\n") if path.exists() else 0


def run_main(*argv: str) -> int:
    with pytest.raises(SystemExit) as exit:
        main(list(argv))
    return exit.value.code


def test_a_questions_file_that_is_not_utf8_is_one_line_naming_file_and_line(tmp_path, capsys):
    questions = tmp_path / "q.jsonl"
    questions.write_bytes(b'{"id": 1, "question": "ok?"}\n{"id": 2, "question": "caf\xe9?"}\n')

    assert run_main("batch", str(questions), "-o", str(tmp_path / "a.jsonl")) == 2

    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(lines) == 1 and f"{questions}:2 is not UTF-8" in lines[0], lines
    assert not (tmp_path / "a.jsonl").exists()


def scripted_env(tmp_path: Path, url: str) -> dict[str, str]:
    """Settings of a killed run: data in tmp_path, chat and embeddings from the loopback `url`
    (no embedding model to load in each run)."""
    return {
        "DEEPSIFT_DATA_DIR": str(tmp_path / "data"),
        "DEEPSIFT_LLM_BASE_URL": url,
        "DEEPSIFT_LLM_API_KEY": "k",
        "DEEPSIFT_EMBEDDING_BASE_URL": url,
        "DEEPSIFT_EMBEDDING_MODEL": "fake-embed",
    }


def test_a_batch_killed_at_random_points_answers_every_question_exactly_once(tmp_path, monkeypatch):
    with FakeOpenAI(ScriptedResearcher(), delay=0.05) as llm:
        env = scripted_env(tmp_path, llm.url) | {"DEEPSIFT_MAX_ITERATIONS": "1"}
        corpus = tmp_path / "corpus"  # as plain text: no document parser to load
        corpus.mkdir()
        for path in (CORPUS / "science").glob("*.md"):
            (corpus / f"{path.stem}.txt").write_text(path.read_text())
        science = ["ingest", str(corpus), "--collection", "science"]
        assert run_forked(science, env, tmp_path) == 0
        questions = tmp_path / "q.jsonl"
        ids = [f"q{n}" for n in range(8)]
        questions.write_text(
            "".join(
                json.dumps({"id": i, "question": f"{i}: what did Kestrel Works cost?"}) + "\n"
                for i in ids
            )
        )
        answers = tmp_path / "a.jsonl"
        argv = ["batch", str(questions), "-o", str(answers), "--concurrency", "2"]
        seed = random.randrange(10**6)

        left = kill_at_random_points(argv, env, tmp_path, answers, len(ids), random.Random(seed))
        with answers.open("a") as handle:
            handle.write('{"id": "q9", "question": "cut sh')  # a line the kill cut short
        done = {row["id"] for row in map(json.loads, answers.read_text().splitlines()[:-1])}
        asked = len(llm.requests)

        assert run_forked(argv, env, tmp_path) == 0, (tmp_path / "deepsift.log").read_text()

        decomposed = [r for r in llm.requests[asked:] if "SubQueries" in json.dumps(r)]
    rows = [json.loads(line) for line in answers.read_text().splitlines()]
    assert sorted(row["id"] for row in rows) == sorted(ids), f"seed {seed}, kills left {left}"
    assert all(row["error"] is None for row in rows)
    assert len(decomposed) == len(ids) - len(done)  # only the unanswered ones ran again
    assert f"{len(done)} already answered" in (tmp_path / "deepsift.log").read_text()
