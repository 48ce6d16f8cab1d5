"""Eval under faults: corpora kept apart from the user's collections, errored rows retried,
kills at random points."""

import json
import random

import pytest
from test_batch_faults import kill_at_random_points, run_forked, scripted_env
from test_eval import write_2wiki

from deepsift.cli import main
from deepsift.config import Settings
from deepsift.deps import Deps
from deepsift.eval.runner import ResultsFile
from deepsift.llm.embedders import get_embedder
from deepsift.retrieval.sources import resolve_sources
from deepsift.store import Store

from fake_openai import FakeOpenAI, last_user_text
from scripted import ScriptedResearcher


def run_main(*argv: str) -> int:
    with pytest.raises(SystemExit) as exit:
        main(list(argv))
    return exit.value.code


def test_an_eval_corpus_lives_apart_from_the_users_collections(tmp_path, monkeypatch, capsys):
    data = tmp_path / "data"
    monkeypatch.setenv("DEEPSIFT_DATA_DIR", str(data))
    dataset = write_2wiki(tmp_path / "wiki.json")
    args = ["eval", "retrieval", "--dataset", str(dataset), "--agents", "naive"]

    assert run_main(*args, "--out", str(tmp_path / "out")) == 0
    capsys.readouterr()
    assert run_main("collections", "--json") == 0

    assert json.loads(capsys.readouterr().out) == []  # the user's store holds no eval corpus
    with Store(Settings(data_dir=data, milvus_uri=str(data / "eval" / "milvus.db"))) as store:
        (corpus,) = store.names()  # kept for the next eval of this dataset
    assert corpus.startswith("eval_")


def test_research_does_not_route_to_eval_corpora_an_older_deepsift_left(tmp_path):
    settings = Settings(data_dir=tmp_path / "data")
    embedder = get_embedder(settings)
    with Store(settings) as store:
        store.ensure("notes", "my notes", embedder)
        store.ensure("eval_0123456789ab", "wiki.json: 6 context paragraphs", embedder)
        deps = Deps(settings, store, embedder, llm=None)

        assert resolve_sources(deps, None) == ["notes"]
        assert resolve_sources(deps, ["eval_0123456789ab"]) == ["eval_0123456789ab"]


def test_a_question_that_failed_or_that_a_kill_split_runs_again_and_appears_once(tmp_path):
    expected = {"naive": [0], "deepsift": [1, 2]}
    results = ResultsFile(tmp_path, {"run": 1}, expected)
    results.add([row("deepsift", "q1", 1), row("deepsift", "q1", 2), row("naive", "q1", 0)])
    results.add([{**row("naive", "q2", 0), "error": "APIStatusError: 500"}])
    with (tmp_path / "results.jsonl").open("a") as handle:  # q2's rows, cut after bound 1
        handle.write(json.dumps(row("deepsift", "q2", 1)) + '\n{"agent": "deepsift", "id": "q2", ')

    reopened = ResultsFile(tmp_path, {"run": 1}, expected)

    assert reopened.done == {("deepsift", "q1"), ("naive", "q1")}
    kept = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert kept == reopened.rows and len(kept) == 3


def row(agent: str, qid: str, bound: int) -> dict:
    return {"agent": agent, "id": qid, "max_iterations": bound, "error": None}


Q2 = "the publisher founded by Tobin Ashe"  # in each prompt for q2 (write_2wiki), no other


class Flaky(ScriptedResearcher):
    """Fails every call for question q2 while `broken`."""

    broken = True

    def __call__(self, body):
        if self.broken and Q2 in last_user_text(body):
            raise RuntimeError("the endpoint fails on this one")
        return super().__call__(body)


def test_eval_retries_the_questions_that_errored(tmp_path, monkeypatch, capsys):
    dataset = write_2wiki(tmp_path / "wiki.json")
    out = tmp_path / "out"
    args = ["eval", "retrieval", "--dataset", str(dataset), "--limit", "2", "--out", str(out)]
    responder = Flaky()
    with FakeOpenAI(responder) as llm:
        monkeypatch.setenv("DEEPSIFT_DATA_DIR", str(tmp_path / "data"))
        monkeypatch.setenv("DEEPSIFT_LLM_BASE_URL", llm.url)
        monkeypatch.setenv("DEEPSIFT_LLM_API_KEY", "k")
        monkeypatch.setenv("DEEPSIFT_LLM_RETRIES", "0")  # q2 fails at once
        assert run_main(*args, "--max-iterations", "2") == 0
        failed = [r["id"] for r in read_results(out) if r["error"]]
        responder.broken = False
        calls = len(llm.requests)

        assert run_main(*args, "--max-iterations", "2") == 0

        retried = llm.requests[calls:]
    assert failed == ["q2", "q2"]  # deepsift at bounds 1 and 2; naive asks no model
    assert retried and all(Q2 in last_user_text(r) for r in retried)
    rows = read_results(out)
    assert sorted((r["agent"], r["id"], r["max_iterations"]) for r in rows) == [
        ("deepsift", q, bound) for q in ("q1", "q2") for bound in (1, 2)
    ] + [("naive", "q1", 0), ("naive", "q2", 0)]
    assert all(r["error"] is None for r in rows)


def read_results(out) -> list[dict]:
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


def test_an_eval_killed_at_random_points_scores_every_question_exactly_once(tmp_path):
    dataset = tmp_path / "wiki.json"
    ids = [f"q{n}" for n in range(6)]
    dataset.write_text(json.dumps([wiki_question(qid) for qid in ids]))
    out = tmp_path / "out"
    argv = ["eval", "retrieval", "--dataset", str(dataset), "--max-iterations", "2"]
    argv += ["--out", str(out)]
    with FakeOpenAI(ScriptedResearcher(), delay=0.05) as llm:
        env = scripted_env(tmp_path, llm.url)
        seed = random.randrange(10**6)
        rows = 3 * len(ids)  # naive at bound 0, deepsift at bounds 1 and 2

        left = kill_at_random_points(
            argv, env, tmp_path, out / "results.jsonl", rows, random.Random(seed)
        )
        with (out / "results.jsonl").open("a") as handle:
            handle.write('{"agent": "deepsift", "id": "q5", "max_iter')  # a line a kill cut short
        scored = {r["id"] for r in readable(out / "results.jsonl") if r["max_iterations"] == 2}
        asked = len(llm.requests)

        assert run_forked(argv, env, tmp_path) == 0, (tmp_path / "deepsift.log").read_text()

        decomposed = [r for r in llm.requests[asked:] if "SubQueries" in json.dumps(r)]
    found = sorted((r["agent"], r["id"], r["max_iterations"]) for r in read_results(out))
    assert found == sorted(
        [("naive", q, 0) for q in ids] + [("deepsift", q, b) for q in ids for b in (1, 2)]
    ), f"seed {seed}, kills left {left}"
    assert all(r["error"] is None for r in read_results(out))
    assert len(decomposed) == len(ids) - len(scored)  # only the unscored ones ran again


def wiki_question(qid: str) -> dict:
    """A question in 2WikiMultiHopQA's shape, with two context paragraphs of its own."""
    return {
        "_id": qid,
        "question": f"Where was the painter {qid} born?",
        "answer": "Marrowby",
        "context": [[f"{qid} Venn", [f"{qid} Venn is a painter."]], [f"{qid} town", ["A town."]]],
        "supporting_facts": [[f"{qid} Venn", 0]],
    }


def readable(path) -> list[dict]:
    """The rows of a results file a kill may have cut short."""
    rows = []
    for line in path.read_text().splitlines() if path.exists() else []:
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            pass
    return rows
