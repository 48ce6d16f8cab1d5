from deepsift.api import research
from deepsift.config import Settings
from deepsift.deps import Deps
from deepsift.llm.chat import chat_model
from deepsift.llm.embedders import get_embedder
from deepsift.prompts.search_o1 import (
    BEGIN_RESULT,
    END_QUERY,
    END_RESULT,
    LIMIT_REACHED,
    SHORT_ANSWER,
)

from fake_openai import FakeOpenAI, schema_name
from scripted import ScriptedSearchO1

QUESTION = "Which river feeds the lake that Kestrel Works protects?"
QUERIES = ["Kestrel Works budget", "River Orrin phosphorus load"]


def run(tmp_path, sample_store, responder, **kwargs):
    with FakeOpenAI(responder) as llm:
        settings = Settings(data_dir=tmp_path / "data", llm_base_url=llm.url, llm_api_key="t")
        deps = Deps(settings, sample_store, get_embedder(settings), chat_model(settings))
        result = research(QUESTION, settings, agent="search-o1", deps=deps, **kwargs)
    return result, llm.requests


def reasoning_calls(requests):
    return [r for r in requests if r["messages"][0]["content"].startswith("You are a reasoning")]


def reading_calls(requests):
    return [r for r in requests if r["messages"][0]["content"].startswith("You read search")]


def test_a_query_stops_generation_is_searched_condensed_and_reasoning_resumes(
    tmp_path, sample_store
):
    result, requests = run(tmp_path, sample_store, ScriptedSearchO1(QUERIES))

    reasoning = reasoning_calls(requests)
    assert len(reasoning) == 3 and all(r["stop"] == [END_QUERY] for r in reasoning)
    readings = reading_calls(requests)
    assert len(readings) == 2
    first_reading = readings[0]["messages"][-1]["content"]
    assert "Current search query: Kestrel Works budget" in first_reading
    assert "<excerpt>" in first_reading and "Kestrel" in first_reading
    # The condensed knowledge, not the raw excerpts, is what re-enters the reasoning.
    resumed = reasoning[1]["messages"]
    assert resumed[-2]["role"] == "assistant" and resumed[-2]["content"].endswith(END_QUERY)
    injected = resumed[-1]["content"]
    assert injected.startswith(f"{BEGIN_RESULT}\nKnowledge for this query [1].\n{END_RESULT}")
    assert "<excerpt>" not in injected
    assert result.agent == "search-o1" and result.status == "done"
    assert result.answer == "Marrowby" and result.answered_by == "reasoning"
    assert result.sub_queries == QUERIES and result.iterations == 2
    assert "**Answer:** Marrowby" in result.report and "## Sources" in result.report
    assert result.sources and "[1]" in result.report


def test_max_searches_is_enforced_and_the_model_is_told_to_answer(tmp_path, sample_store):
    queries = [f"fact number {n}" for n in range(1, 8)]

    result, requests = run(tmp_path, sample_store, ScriptedSearchO1(queries), max_searches=2)

    assert result.iterations == 2 and result.sub_queries == queries[:2]
    assert len(reading_calls(requests)) == 2
    contents = [m["content"] for r in requests for m in r["messages"]]
    assert LIMIT_REACHED in contents
    assert result.status == "done" and result.report.startswith(f"# {QUESTION}")


def test_a_sentence_for_an_answer_is_shortened_in_one_more_turn(tmp_path, sample_store):
    sentence = "The river that feeds the lake is the River Marrowby"
    responder = ScriptedSearchO1(QUERIES, sentence=sentence)

    result, requests = run(tmp_path, sample_store, responder)

    asked = reasoning_calls(requests)[-1]["messages"]
    assert asked[-1]["content"] == SHORT_ANSWER and asked[-2]["content"].endswith(sentence)
    assert result.answer == "Marrowby" and result.answered_by == "reasoning"
    assert "**Answer:** Marrowby" in result.report


def test_a_reasoning_that_found_nothing_is_answered_from_the_excerpts(tmp_path, sample_store):
    responder = ScriptedSearchO1(QUERIES, answer="No helpful information found")

    result, requests = run(tmp_path, sample_store, responder)

    answering = [r for r in requests if schema_name(r) == "ShortAnswer"]
    assert len(answering) == 1 and "<excerpt>" in answering[0]["messages"][-1]["content"]
    assert result.answer == "Marrowby" and result.answered_by == "excerpts"


def test_a_repeated_query_is_answered_from_what_was_found(tmp_path, sample_store):
    responder = ScriptedSearchO1(["Kestrel Works budget", "kestrel works budget"])

    result, requests = run(tmp_path, sample_store, responder)

    assert result.sub_queries == ["Kestrel Works budget"] and result.iterations == 1
    assert len(reading_calls(requests)) == 1
    last = reasoning_calls(requests)[-1]["messages"]
    results = [m["content"] for m in last if m["content"].startswith(BEGIN_RESULT)]
    assert len(results) == 2 and results[0] == results[1]


def test_results_imagined_by_an_endpoint_that_ignores_stop_are_cut_off(tmp_path, sample_store):
    result, requests = run(tmp_path, sample_store, ScriptedSearchO1(QUERIES, honour_stop=False))

    transcript = " ".join(m["content"] for m in reasoning_calls(requests)[-1]["messages"])
    assert "imagined" not in transcript
    assert result.sub_queries == QUERIES and result.answer == "Marrowby"


def test_a_search_o1_thread_is_reread_with_its_own_agent(tmp_path, sample_store):
    agent = "search-o1"
    with FakeOpenAI(ScriptedSearchO1(QUERIES)) as llm:
        settings = Settings(data_dir=tmp_path / "data", llm_base_url=llm.url, llm_api_key="t")
        deps = Deps(settings, sample_store, get_embedder(settings), chat_model(settings))
        first = research(QUESTION, settings, agent=agent, deps=deps)
        calls = len(llm.requests)

        again = research(thread_id=first.thread_id, settings=settings, deps=deps)

    assert len(llm.requests) == calls
    assert again.agent == agent and again.report == first.report and again.answer == "Marrowby"
