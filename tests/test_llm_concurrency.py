"""One limit on the requests in flight to an endpoint across every run of a process: a
rate-limited endpoint answers more than llm_concurrency with 429s."""

from concurrent.futures import ThreadPoolExecutor

from deepsift.api import research
from deepsift.config import Settings
from deepsift.deps import Deps
from deepsift.llm.chat import chat_model
from deepsift.llm.embedders import get_embedder

from fake_openai import FakeOpenAI
from scripted import ScriptedResearcher


def most_at_once(intervals: list[tuple[float, float]]) -> int:
    """The most replies the endpoint was working on at one moment."""
    moments = sorted([(start, 1) for start, _ in intervals] + [(end, -1) for _, end in intervals])
    running = most = 0
    for _, change in moments:
        running += change
        most = max(most, running)
    return most


def test_two_runs_at_once_never_send_more_than_llm_concurrency(tmp_path, sample_store):
    with FakeOpenAI(ScriptedResearcher(), delay=0.05) as endpoint:
        settings = Settings(
            data_dir=tmp_path / "data",
            llm_base_url=endpoint.url,
            llm_api_key="t",
            llm_concurrency=2,
        )
        questions = [
            "Why was Kestrel Works built and what did it cost?",
            "What did the monitoring network measure in Lake Veldmere?",
        ]

        def run(question: str):
            deps = Deps(settings, sample_store, get_embedder(settings), chat_model(settings))
            return research(question, settings, collections=["science"], deps=deps)

        with ThreadPoolExecutor(2) as pool:
            results = list(pool.map(run, questions))

    assert all(r.status == "done" and r.sources for r in results)
    assert len(endpoint.intervals) >= 10
    assert most_at_once(endpoint.intervals) == 2  # the runs' sections wait for a slot
