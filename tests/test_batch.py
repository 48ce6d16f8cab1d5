import json
import stat
import threading
import time

import pytest

from deepsift.cli import main
from deepsift.llm.embed_batcher import EmbedBatcher
from deepsift.llm.embedders import MINILM_CUTS

from conftest import CORPUS, run_cli
from fake_openai import FakeOpenAI, last_user_text
from scripted import ScriptedResearcher


class SlowEmbedder:
    name, dim, cosine_offset, cuts = "slow", 1, 0.0, MINILM_CUTS

    def __init__(self) -> None:
        self.batches: list[list[str]] = []

    def embed(self, texts: list[str]) -> list[list[float]]:
        self.batches.append(texts)
        time.sleep(0.05)
        return [[float(len(text))] for text in texts]

    def embed_queries(self, texts: list[str]) -> list[list[float]]:
        return [[-v[0]] for v in self.embed(texts)]  # a query's vector differs from a document's


def test_concurrent_embedding_requests_are_served_in_one_batch_each_getting_its_own():
    inner = SlowEmbedder()
    batcher = EmbedBatcher(inner, window=0.02)
    results: dict[int, list[list[float]]] = {}

    def ask(n: int) -> None:
        results[n] = batcher.embed(["x" * n, "y" * (n + 100)])

    threads = [threading.Thread(target=ask, args=(n,)) for n in range(1, 9)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert results == {n: [[float(n)], [float(n + 100)]] for n in range(1, 9)}
    assert batcher.requests == 8 and batcher.model_calls == len(inner.batches) <= 2
    assert sum(len(b) for b in inner.batches) == 16


def test_queries_and_documents_in_flight_together_are_embedded_each_their_own_way():
    inner = SlowEmbedder()
    batcher = EmbedBatcher(inner, window=0.05)
    results: dict[int, list[list[float]]] = {}

    def ask(n: int) -> None:
        embed = batcher.embed_queries if n % 2 else batcher.embed
        results[n] = embed(["x" * n])

    threads = [threading.Thread(target=ask, args=(n,)) for n in range(1, 7)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert results == {n: [[-float(n) if n % 2 else float(n)]] for n in range(1, 7)}
    assert batcher.model_calls == len(inner.batches) <= 4


def test_an_embedding_failure_reaches_every_waiting_caller():
    class Broken(SlowEmbedder):
        def embed(self, texts):
            raise RuntimeError("model crashed")

    batcher = EmbedBatcher(Broken(), window=0.02)
    errors = []

    def ask() -> None:
        try:
            batcher.embed(["a"])
        except RuntimeError as e:
            errors.append(str(e))

    threads = [threading.Thread(target=ask) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=5)
    assert errors == ["model crashed"] * 4


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    data = tmp_path_factory.mktemp("batch") / "data"
    result = run_cli("ingest", str(CORPUS / "science"), "--collection", "science", data=data)
    assert result.returncode == 0, result.stderr
    return data


def write_questions(path, count: int, poison: int | None = None):
    lines = []
    for n in range(1, count + 1):
        text = f"Question {n}: what did Kestrel Works cost?"
        if n == poison:
            text = "poison: this question breaks the endpoint"
        lines.append(json.dumps({"id": f"q{n}", "question": text}))
    path.write_text("\n".join(lines) + "\n")
    return path


class PoisonedResearcher(ScriptedResearcher):
    def __call__(self, body):
        if "poison" in last_user_text(body):
            raise RuntimeError("the endpoint fails on this one")
        return super().__call__(body)


def read_rows(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_batch_answers_every_question_in_the_research_json_shape(data, tmp_path):
    questions = write_questions(tmp_path / "q.jsonl", 3, poison=2)
    answers = tmp_path / "a.jsonl"

    with FakeOpenAI(PoisonedResearcher()) as llm:
        result = run_cli(
            "batch",
            str(questions),
            "-o",
            str(answers),
            "--concurrency",
            "3",
            data=data,
            DEEPSIFT_LLM_BASE_URL=llm.url,
            DEEPSIFT_LLM_API_KEY="k",
        )

    assert result.returncode == 0, result.stderr
    rows = {row["id"]: row for row in read_rows(answers)}
    assert set(rows) == {"q1", "q2", "q3"}
    assert rows["q1"]["error"] is None and rows["q3"]["error"] is None
    assert {"question", "report", "sources", "sub_queries", "usage", "answer"} <= set(rows["q1"])
    assert "## Sources" in rows["q1"]["report"]
    assert "500" in rows["q2"]["error"] or "Internal" in rows["q2"]["error"]
    assert "failed q2" in result.stderr and "2 answered, 1 failed" in result.stderr


def test_a_bad_questions_line_names_the_file_and_line(tmp_path, capsys):
    questions = tmp_path / "q.jsonl"
    questions.write_text('{"id": 1, "question": "ok?"}\n{"id": 2}\n')

    with pytest.raises(SystemExit) as exit:
        main(["batch", str(questions), "-o", str(tmp_path / "a.jsonl")])

    assert exit.value.code == 2
    assert f'{questions}:2 needs a "question"' in capsys.readouterr().err


def test_a_rerun_drops_failed_answers_and_keeps_the_answers_file_s_mode(tmp_path):
    from deepsift.api.batch import answered_ids

    output = tmp_path / "answers.jsonl"
    output.write_text('{"id": "a", "error": null}\n{"id": "b", "error": "timed out"}\n{"id"')
    output.chmod(0o640)

    done = answered_ids(output)

    assert done == {"a"} and output.read_text() == '{"id": "a", "error": null}\n'
    assert stat.S_IMODE(output.stat().st_mode) == 0o640
