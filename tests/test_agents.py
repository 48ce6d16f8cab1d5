"""An agent is its module and one line in the registry: every entry point picks it up."""

import json
from pathlib import Path

import pytest
from langgraph.graph import END, START, StateGraph
from starlette.testclient import TestClient
from test_eval import write_2wiki
from test_serve import run_events

from deepsift.agents import AGENTS, Agent
from deepsift.api import research
from deepsift.cli import main
from deepsift.deps import Deps
from deepsift.retrieval.search import search_source
from deepsift.retrieval.sources import resolve_sources
from deepsift.run.state import RunState, allow_state_types
from deepsift.serve.app import create_app

ROOT = Path(__file__).parent.parent


class EchoState(RunState, total=False):
    max_iterations: int


def look_once(state: EchoState, deps: Deps) -> dict:
    """A trivial agent: one search of the question; the best hit's title is the answer."""
    sources = resolve_sources(deps, state.get("sources_to_search"), state.get("web"))
    chunks = {}
    for source in sources:
        chunks |= search_source(state["question"], source, deps, of_question=True)["chunks"]
    best = min(chunks.values(), key=lambda c: c.question_rank)
    return {
        "sources_to_search": sources,
        "chunks": chunks,
        "iteration": 1,
        "answer": best.title,
        "report": f"# {state['question']}\n\n{best.title}\n",
    }


def build_echo(deps, checkpointer=None, finish="report"):
    allow_state_types(checkpointer)
    graph = StateGraph(EchoState)
    graph.add_node("look", lambda state: look_once(state, deps))
    graph.add_edge(START, "look")
    graph.add_edge("look", END)
    return graph.compile(checkpointer=checkpointer, name="echo")


@pytest.fixture
def echo(monkeypatch):
    """The registry line an agent's author adds."""
    agent = Agent("echo", "one search", build_echo, "max_iterations", "max_iterations", 5, 1)
    monkeypatch.setitem(AGENTS, "echo", agent)
    return agent


def _main(*argv: str, capsys) -> tuple[int, str]:
    with pytest.raises(SystemExit) as stopped:
        main(list(argv))
    return stopped.value.code, capsys.readouterr().out


def test_a_registered_agent_runs_through_research(echo, settings, deps):
    result = research("What did the Kestrel Works plant cost?", settings, agent="echo", deps=deps)

    assert result.agent == "echo" and result.status == "done"
    assert result.answer and result.answer in result.report
    assert result.iterations == 1


def test_an_unregistered_agent_is_refused_in_one_line(settings, deps):
    with pytest.raises(Exception, match="unknown agent 'echo'; choose from deepsift"):
        research("What did it cost?", settings, agent="echo", deps=deps)


def test_a_registered_agent_runs_through_the_command_line(
    echo, scripted_llm, tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("DEEPSIFT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("DEEPSIFT_LLM_BASE_URL", scripted_llm.url)
    corpus = ROOT / "examples" / "corpus" / "science"
    assert _main("ingest", str(corpus), "--collection", "science", capsys=capsys)[0] == 0

    code, out = _main("research", "Why was Kestrel Works built?", "--agent", "echo", "--json",
                      capsys=capsys)  # fmt: skip

    assert code == 0
    printed = json.loads(out)
    assert printed["agent"] == "echo" and printed["answer"]
    assert "look(look)" in _main("graph", "--agent", "echo", capsys=capsys)[1]  # its one step
    assert scripted_llm.requests == []  # the echo agent asks no model


def test_a_registered_agent_runs_through_the_evaluation(
    echo, scripted_llm, tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("DEEPSIFT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("DEEPSIFT_LLM_BASE_URL", scripted_llm.url)
    dataset = write_2wiki(tmp_path / "wiki.json")
    out = tmp_path / "out"

    code, printed = _main(
        "eval", "retrieval", "--dataset", str(dataset), "--agents", "naive,echo",
        "--max-iterations", "2", "--out", str(out), capsys=capsys,
    )  # fmt: skip

    assert code == 0
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    echoed = {r["id"]: r for r in rows if r["agent"] == "echo"}
    naive = {r["id"]: r for r in rows if r["agent"] == "naive"}
    assert sorted(echoed) == ["q1", "q2", "q3"]
    # No round_end: one row at its bound, not one per round.
    assert {r["max_iterations"] for r in echoed.values()} == {2}
    # One search of the question, as naive's: the same first title.
    assert all(echoed[q]["ranked_titles"][0] == naive[q]["ranked_titles"][0] for q in echoed)
    assert "| echo | 2 | 3 |" in printed


def test_a_registered_agent_is_offered_and_run_by_the_web_app(echo, settings, deps):
    with TestClient(create_app(settings, deps), base_url="http://127.0.0.1:8000") as client:
        page = client.get("/").text
        started = client.post("/api/runs", json={"question": "Why?", "agent": "echo"})
        refused = client.post("/api/runs", json={"question": "Why?", "agent": "nobody"})
        events = run_events(client, started.json()["thread_id"])

    assert '<option value="echo">echo: one search</option>' in page
    assert '<option value="deepsift">' in page
    result = events[-1][1]
    assert result["status"] == "done" and result["agent"] == "echo" and result["answer"]
    assert refused.status_code == 400 and "unknown agent 'nobody'" in refused.json()["error"]
