import json
import subprocess
from pathlib import Path

import pytest

from deepsift.errors import UserError
from deepsift.eval.datasets import load_dataset
from deepsift.eval.metrics import all_found, exact_match, recall_at_k, token_f1
from deepsift.eval.runner import ResultsFile
from deepsift.eval.summary import by_kind, summarize

from conftest import run_cli
from fake_openai import FakeOpenAI
from scripted import ScriptedResearcher, ScriptedSearchO1


def test_ranked_recall_counts_gold_titles_in_the_first_k():
    ranking = ["A", "x", "B", "y", "z", "C"]

    assert recall_at_k(ranking, ["A", "B"], 2) == 0.5
    assert recall_at_k(ranking, ["A", "B"], 3) == 1.0
    assert recall_at_k(ranking, ["C", "A", "A"], 5) == 0.5  # gold titles count once
    assert recall_at_k(ranking, [], 5) == 0.0
    assert all_found(ranking, ["A", "C"], 6) and not all_found(ranking, ["A", "C"], 5)


def test_answers_are_compared_after_the_usual_normalisation():
    assert exact_match("The Eiffel Tower!", "eiffel tower") == 1.0
    assert exact_match("Paris, France", "Paris") == 0.0
    assert token_f1("Paris, France", "Paris") == pytest.approx(2 / 3)
    assert token_f1("an apple", "the pear") == 0.0


def test_errored_questions_count_as_zero_and_as_errors():
    rows = [
        result_row("naive", 0, "1", 1.0),
        {"agent": "naive", "max_iterations": 0, "id": "2", "error": "boom"},
    ]

    (line,) = summarize(rows, "retrieval")

    assert line["recall@5"] == 0.5 and line["errors"] == 0.5 and line["questions"] == 2


def write_2wiki(path: Path) -> Path:
    """Three hand-made questions in 2WikiMultiHopQA's shape."""
    facts = {
        "Orla Venn": ["Orla Venn is a painter born in Marrowby.", "She studied in Calder."],
        "Marrowby": ["Marrowby is a fishing town on the Grey Coast."],
        "Tobin Ashe": ["Tobin Ashe founded the Lantern Press in 1921."],
        "Lantern Press": ["The Lantern Press is a publisher based in Hollowmere."],
        "Quill Harbour": ["Quill Harbour hosts an annual regatta."],
        "Fenwick Dray": ["Fenwick Dray is a composer from Quill Harbour."],
    }

    def context(*titles):
        return [[t, facts[t]] for t in titles]

    data = [
        {
            "_id": "q1",
            "question": "Where was the painter Orla Venn born, and what is that town?",
            "answer": "Marrowby",
            "context": context("Orla Venn", "Marrowby", "Quill Harbour"),
            "supporting_facts": [["Orla Venn", 0], ["Marrowby", 0]],
        },
        {
            "_id": "q2",
            "question": "Where is the publisher founded by Tobin Ashe based?",
            "answer": "Hollowmere",
            "context": context("Tobin Ashe", "Lantern Press", "Marrowby"),
            "supporting_facts": [["Tobin Ashe", 0], ["Lantern Press", 0]],
        },
        {
            "_id": "q3",
            "question": "What event does the home town of Fenwick Dray host?",
            "answer": "an annual regatta",
            "context": context("Fenwick Dray", "Quill Harbour"),
            "supporting_facts": [["Fenwick Dray", 0], ["Quill Harbour", 0]],
        },
    ]
    path.write_text(json.dumps(data))
    return path


def test_datasets_of_each_format_read_into_one_shape(tmp_path):
    wiki = load_dataset(write_2wiki(tmp_path / "wiki.json"))
    assert wiki[0].gold_titles == ["Orla Venn", "Marrowby"]
    assert wiki[0].paragraphs[0] == (
        "Orla Venn",
        "Orla Venn is a painter born in Marrowby. She studied in Calder.",
    )

    musique = tmp_path / "musique.jsonl"
    musique.write_text(
        json.dumps(
            {
                "id": "m1",
                "question": "Q?",
                "answer": "A",
                "paragraphs": [
                    {"title": "T1", "paragraph_text": "P1", "is_supporting": True},
                    {"title": "T2", "paragraph_text": "P2", "is_supporting": False},
                ],
            }
        )
        + "\n"
    )
    (question,) = load_dataset(musique)
    assert (question.id, question.gold_titles, len(question.paragraphs)) == ("m1", ["T1"], 2)

    frames = tmp_path / "frames.csv"
    frames.write_text('question,true_answer,wiki_links\n"Who?",Someone,[]\n')
    assert load_dataset(frames)[0].answer == "Someone"


def test_a_dataset_in_the_wrong_shape_names_the_file_and_field(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"question": "Q?", "answer": "A"}]))

    with pytest.raises(UserError, match=r"bad.json is not in 2wiki format \(field 'context'"):
        load_dataset(bad)


def test_a_results_line_cut_by_a_kill_is_dropped_so_that_question_reruns(tmp_path):
    ResultsFile(tmp_path, {"run": 1}).add([{"agent": "naive", "id": "1"}])
    with (tmp_path / "results.jsonl").open("a") as handle:
        handle.write('{"agent": "naive", "id": "2", "rec')

    results = ResultsFile(tmp_path, {"run": 1})
    results.add([{"agent": "naive", "id": "3"}])

    assert results.done == {("naive", "1"), ("naive", "3")}
    assert len(ResultsFile(tmp_path, {"run": 1}).rows) == 2
    with pytest.raises(UserError, match="another evaluation"):
        ResultsFile(tmp_path, {"run": 2})


def _eval(*args: str, data: Path, llm_url: str, **env: str) -> subprocess.CompletedProcess:
    return run_cli(
        "eval", *args, data=data, DEEPSIFT_LLM_BASE_URL=llm_url, DEEPSIFT_LLM_API_KEY="k", **env
    )


@pytest.fixture
def follow_up_for_q1_only():
    # A paragraph the first round of q1 does not find at top_k 1 (test_every_bound_costs...).
    follow_up = ["Fenwick Dray, composer from Quill Harbour"]
    with FakeOpenAI(ScriptedResearcher(follow_ups=follow_up, follow_up_if="Orla Venn")) as server:
        yield server


def test_small_retrieval_eval_end_to_end_with_resume(tmp_path, follow_up_for_q1_only):
    scripted_llm = follow_up_for_q1_only
    dataset = write_2wiki(tmp_path / "wiki.json")
    out = tmp_path / "out"
    args = ["retrieval", "--dataset", str(dataset), "--max-iterations", "2", "--out", str(out)]

    first = _eval(*args, "--limit", "2", data=tmp_path / "data", llm_url=scripted_llm.url)

    assert first.returncode == 0, first.stderr
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert sorted((r["agent"], r["max_iterations"], r["id"]) for r in rows) == [
        ("deepsift", 1, "q1"),
        ("deepsift", 1, "q2"),
        ("deepsift", 2, "q1"),
        ("deepsift", 2, "q2"),
        ("naive", 0, "q1"),
        ("naive", 0, "q2"),
    ]
    naive = {r["id"]: r for r in rows if r["agent"] == "naive"}
    assert naive["q2"]["ranked_titles"][0] in ("Tobin Ashe", "Lantern Press")
    assert naive["q2"]["recall@2"] == 1.0  # both gold paragraphs lead the 6-paragraph corpus
    deep = {(r["id"], r["max_iterations"]): r for r in rows if r["agent"] == "deepsift"}
    assert deep[("q1", 1)]["llm_calls"] == 1  # decompose only: the bound stops before reflect
    assert deep[("q1", 2)]["llm_calls"] == 2  # + the reflection that asked for a follow-up
    assert deep[("q1", 2)]["rounds"] == 2
    assert deep[("q2", 2)]["rounds"] == 1  # its reflection asked for nothing more
    assert deep[("q2", 2)]["llm_calls"] == 2  # decompose + that reflection
    assert deep[("q2", 1)]["llm_calls"] == 1  # bounded at 1, no reflection would have run
    summary = json.loads((out / "summary.json").read_text())
    assert {(s["agent"], s["max_iterations"]) for s in summary} == {
        ("naive", 0),
        ("deepsift", 1),
        ("deepsift", 2),
    }
    assert "| naive | 0 | 2 |" in first.stdout
    assert (out / "recall_at_5.png").read_bytes()[:4] == b"\x89PNG"

    calls = len(scripted_llm.requests)
    second = _eval(*args, "--limit", "3", data=tmp_path / "data", llm_url=scripted_llm.url)

    assert second.returncode == 0, second.stderr
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert len(rows) == 9  # only q3 was added
    assert len(scripted_llm.requests) - calls == 2  # q3 alone: decompose, reflection with []


def test_answers_eval_scores_exact_match_f1_and_the_judge(tmp_path, scripted_llm):
    dataset = write_2wiki(tmp_path / "wiki.json")
    out = tmp_path / "answers"

    result = _eval(
        "answers",
        "--dataset",
        str(dataset),
        "--limit",
        "2",
        "--max-iterations",
        "2",
        "--judge",
        "--out",
        str(out),
        data=tmp_path / "data",
        llm_url=scripted_llm.url,
    )

    assert result.returncode == 0, result.stderr
    rows = {(r["agent"], r["id"]): r for r in map(json.loads, (out / "results.jsonl").open())}
    assert {key[0] for key in rows} == {"naive", "deepsift"}
    assert {r["max_iterations"] for r in rows.values() if r["agent"] == "deepsift"} == {2}
    q1, q2 = rows[("deepsift", "q1")], rows[("naive", "q2")]
    assert (q1["prediction"], q1["em"], q1["f1"], q1["judge"]) == ("Marrowby", 1.0, 1.0, True)
    assert (q2["em"], q2["judge"]) == (0.0, False)
    summary = json.loads((out / "summary.json").read_text())
    assert all(line["em"] == 0.5 and line["judge"] == 0.5 for line in summary)


def test_search_o1_is_scored_on_what_its_searches_gathered(tmp_path):
    dataset = write_2wiki(tmp_path / "wiki.json")
    out = tmp_path / "o1"
    responder = ScriptedSearchO1(["Orla Venn birthplace", "Marrowby town"])

    with FakeOpenAI(responder) as llm:
        result = _eval(
            "retrieval",
            "--dataset",
            str(dataset),
            "--agents",
            "naive,search-o1",
            "--max-searches",
            "3",
            "--limit",
            "1",
            "--out",
            str(out),
            data=tmp_path / "data",
            llm_url=llm.url,
        )

    assert result.returncode == 0, result.stderr
    rows = {r["agent"]: r for r in map(json.loads, (out / "results.jsonl").open())}
    o1 = rows["search-o1"]
    assert (o1["max_iterations"], o1["rounds"], o1["error"]) == (3, 2, None)
    assert o1["llm_calls"] == 5  # three reasoning turns and two readings; no report
    assert set(o1["ranked_titles"][:2]) == {"Orla Venn", "Marrowby"}
    assert o1["recall@2"] == 1.0
    assert "| search-o1 | 3 | 1 |" in result.stdout


def test_a_limit_below_one_is_a_one_line_error_and_evaluates_nothing(tmp_path):
    dataset = write_2wiki(tmp_path / "wiki.json")
    out = tmp_path / "out"

    result = run_cli(
        "eval",
        "retrieval",
        "--dataset",
        str(dataset),
        "--agents",
        "naive",
        "--limit",
        "0",
        "--out",
        str(out),
        data=tmp_path / "data",
    )

    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and "--limit" in lines[0], lines
    assert not out.exists()


def test_summaries_compare_agents_on_the_questions_all_of_them_finished():
    rows = [result_row("naive", 0, q, 1.0) for q in ("1", "2", "3")]
    rows.append(result_row("deepsift", 1, "1", 0.5))

    naive, deepsift = sorted(summarize(rows, "retrieval"), key=lambda s: s["agent"] != "naive")

    assert naive["questions"] == deepsift["questions"] == 1
    assert (naive["left_out"], deepsift["left_out"]) == (2, 0)
    assert naive["recall@5"] == 1.0 and deepsift["recall@5"] == 0.5


def test_every_bound_costs_what_a_run_bounded_there_spends(tmp_path, follow_up_for_q1_only):
    dataset = write_2wiki(tmp_path / "wiki.json")
    out = tmp_path / "out"
    args = ["retrieval", "--dataset", str(dataset), "--max-iterations", "3", "--out", str(out)]

    result = _eval(
        *args,
        "--limit",
        "2",
        "--agents",
        "deepsift",
        data=tmp_path / "data",
        llm_url=follow_up_for_q1_only.url,
        # Small searches and no hop, so q1's follow-up brings new evidence and its second
        # reflection is asked (a round that adds nothing to the top skips it).
        DEEPSIFT_TOP_K="1",
        DEEPSIFT_HOP_NAMES="0",
    )

    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    calls = {(r["id"], r["max_iterations"]): r["llm_calls"] for r in rows}
    # q1: decompose, a reflection that adds a query, one that stops: 1, 2, 3 calls.
    assert [calls[("q1", bound)] for bound in (1, 2, 3)] == [1, 2, 3]
    # q2: its first reflection stops; a run bounded at 2 or 3 makes it, one bounded at 1 not.
    assert [calls[("q2", bound)] for bound in (1, 2, 3)] == [1, 2, 2]


def test_summaries_break_recall_down_by_hop_count(tmp_path):
    musique = tmp_path / "musique.json"
    record = {
        "id": "m1",
        "question": "Q?",
        "answer": "A",
        "paragraphs": [{"title": "T1", "paragraph_text": "P1", "is_supporting": True}],
        "question_decomposition": [{"question": "a"}, {"question": "b #1"}, {"question": "c #2"}],
    }
    musique.write_text(json.dumps([record]))
    assert load_dataset(musique)[0].kind == "3-hop"

    rows = [
        result_row("naive", 0, "1", 1.0, "2-hop"),
        result_row("naive", 0, "2", 0.5, "2-hop"),
        result_row("naive", 0, "3", 0.0, "3-hop"),
    ]

    lines = {line["kind"]: line for line in by_kind(rows, "retrieval")}

    assert set(lines) == {"2-hop", "3-hop"}
    assert lines["2-hop"]["recall@5"] == 0.75 and lines["2-hop"]["questions"] == 2
    assert lines["3-hop"]["recall@5"] == 0.0


def result_row(agent: str, bound: int, qid: str, recall: float, kind: str = "") -> dict:
    """One line of results.jsonl with the same recall at every k."""
    return {
        "agent": agent,
        "max_iterations": bound,
        "id": qid,
        "kind": kind,
        **{f"recall@{k}": recall for k in (2, 5, 10)},
        "all@10": recall == 1.0,
        "rounds": 1,
        "llm_calls": 0,
        "prompt_tokens": 0,
        "completion_tokens": 0,
        "seconds": 0.1,
        "error": None,
    }
