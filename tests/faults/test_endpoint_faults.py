"""The LLM endpoint fails mid-run: one line naming the endpoint, what happened and the thread to
resume (exit 2); resuming against a working endpoint repeats no finished LLM call."""

import json
import re
import socket
import sqlite3
import threading
import time
from pathlib import Path

import openai
import pytest

from deepsift.cli import main
from deepsift.cli.console import Waiting
from deepsift.config import Settings
from deepsift.llm.chat import chat_model

from fake_openai import FakeOpenAI, schema_name
from scripted import ScriptedResearcher

EndpointFailed = openai.APIError
BRIEF = ["--length", "brief"]  # a short report: fewer calls, a faster test
QUESTION = "Why was Kestrel Works built, what did it cost against its budget, and did it work?"


@pytest.fixture(scope="module")
def corpus_uri(sample_store, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The Milvus Lite file of the sample corpus (conftest's sample_store): CLI runs in this
    process reopen it through the server it already runs."""
    (uri,) = tmp_path_factory.getbasetemp().glob("corpus[0-9]*/milvus.db")
    return str(uri)


@pytest.fixture
def cli(monkeypatch, capsys, corpus_uri, tmp_path: Path):
    """`deepsift ARGS` in this process against `url`: (exit status, stdout, stderr lines)."""
    monkeypatch.setenv("DEEPSIFT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("DEEPSIFT_MILVUS_URI", corpus_uri)
    monkeypatch.setenv("DEEPSIFT_LLM_API_KEY", "test")
    monkeypatch.setenv("DEEPSIFT_LLM_RETRIES", "0")  # a dead endpoint fails at once

    def run(url: str, *args: str, **env: str) -> tuple[int, str, list[str]]:
        monkeypatch.setenv("DEEPSIFT_LLM_BASE_URL", url)
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        with pytest.raises(SystemExit) as ended:
            main(list(args))
        captured = capsys.readouterr()
        return ended.value.code, captured.out, [s for s in captured.err.splitlines() if s.strip()]

    return run


def _the_error(status: int, lines: list[str]) -> str:
    """The run's last line, its only error (the live view's step lines come before it)."""
    assert status == 2 and lines[-1].startswith("error: "), lines
    assert sum(line.startswith("error") for line in lines) == 1, lines
    return lines[-1]


def _dies_at(schema: str):
    return lambda body: schema_name(body) == schema


@pytest.fixture(scope="module")
def clean_calls(corpus_uri, tmp_path_factory) -> list[str]:
    """The LLM calls (their schemas) of one clean run of QUESTION."""
    from deepsift import research
    from deepsift.deps import Deps
    from deepsift.llm.embedders import get_embedder
    from deepsift.store import Store

    with FakeOpenAI(ScriptedResearcher(follow_ups=[])) as server:
        settings = Settings(
            data_dir=tmp_path_factory.mktemp("clean"),
            milvus_uri=corpus_uri,
            llm_base_url=server.url,
            llm_api_key="test",
        )
        deps = Deps(settings, Store(settings), get_embedder(settings), chat_model(settings))
        research(QUESTION, settings, deps=deps, length="brief")
        deps.store.close()
    return [schema_name(body) for body in server.requests]


@pytest.mark.parametrize(
    "dies_at, failure, step",
    [
        ("SubQueries", "close", {"SubQueries"}),  # decompose
        ("Reflection", "500", {"Reflection"}),  # the searches' round: route, search, reflect
        ("Answered", "close", {"Answered"}),  # synthesis: its first section
        # synthesis, after its sections: kept replies, not asked again.
        ("ReportFrame", "500", {"ReportFrame"}),
    ],
)
def test_a_run_whose_endpoint_dies_names_its_thread_and_resumes_without_repeating_calls(
    cli, clean_calls, dies_at, failure, step, tmp_path
):
    assert dies_at in clean_calls
    scripted = ScriptedResearcher(follow_ups=[])  # one round: route, search, reflect
    with FakeOpenAI(scripted, dies_at=_dies_at(dies_at), failure=failure) as dying:
        status, _, lines = cli(dying.url, "research", QUESTION, *BRIEF)

    error = _the_error(status, lines)
    assert error.startswith(f"error: cannot reach the LLM endpoint {dying.url}") or (
        error.startswith(f"error: the LLM endpoint {dying.url}") and "answered 500" in error
    )
    thread = re.search(r"resume with: deepsift research --thread (\w+)$", error)[1]
    assert dying.refused >= 1

    with FakeOpenAI(ScriptedResearcher(follow_ups=[])) as working:
        status, out, lines = cli(working.url, "research", "--thread", thread, "--json")

    result = json.loads(out)
    assert status == 0 and result["thread_id"] == thread and result["sources"]
    both = [schema_name(body) for body in dying.requests + working.requests]
    assert sorted(both) == sorted(clean_calls)  # nothing finished was asked again
    assert result["usage"]["llm_calls"] == len(clean_calls)  # kept replies still count
    assert schema_name(working.requests[0]) in step  # resumed at the step that failed
    assert dies_at in [schema_name(body) for body in working.requests]
    kept = sqlite3.connect(tmp_path / "data" / "replies.sqlite")
    assert kept.execute("SELECT count(*) FROM replies").fetchone() == (0,)  # finished: forgotten


def test_a_silent_endpoint_is_named_as_silent_and_given_up_on_after_its_deadline(cli):
    with FakeOpenAI(ScriptedResearcher(), dies_at=lambda body: True, failure="silent") as silent:
        started = time.monotonic()
        status, _, lines = cli(
            silent.url,
            "research",
            QUESTION,
            *BRIEF,
            DEEPSIFT_LLM_TIMEOUT="1",
            DEEPSIFT_LLM_RETRIES="2",
        )
        took = time.monotonic() - started

    error = _the_error(status, lines)
    assert (
        f"the LLM endpoint {silent.url}/chat/completions accepted the connection but sent "
        "nothing for 1 s" in error
    )
    assert "resume with: deepsift research --thread " in error
    assert silent.refused == 1 and took < 5  # asked once, not retried


def test_the_live_view_shows_how_long_a_model_call_has_been_waiting():
    listener = socket.create_server(("127.0.0.1", 0))  # accepts (the kernel does), never answers
    url = f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
    llm = chat_model(Settings(llm_base_url=url, llm_api_key="test", llm_timeout=30))
    step = Waiting("routing")
    assert step.__rich__() == "routing"

    call = threading.Thread(target=lambda: pytest.raises(EndpointFailed, llm.invoke, "hello"))
    call.start()
    time.sleep(1.3)
    shown = step.__rich__()
    listener.close()  # resets the connection it held: the call ends now
    call.join()

    assert shown == "routing · waiting for the model (1 s)"
    assert step.__rich__() == "routing"


def test_an_interrupted_run_names_the_thread_that_resumes_it(monkeypatch, capsys, tmp_path):
    import deepsift.api

    given = {}

    def interrupted(question, settings, **options):  # Ctrl-C part way through the run
        given["thread"] = options["thread_id"]
        raise KeyboardInterrupt

    monkeypatch.setattr(deepsift.api, "research", interrupted)
    monkeypatch.setenv("DEEPSIFT_DATA_DIR", str(tmp_path / "data"))
    with pytest.raises(SystemExit) as ended:
        main(["research", QUESTION])

    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert ended.value.code == 130 and given["thread"]
    assert last.endswith(f"resume with: deepsift research --thread {given['thread']}")
