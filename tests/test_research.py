import re

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver

from deepsift import Settings, research
from deepsift.deps import Deps
from deepsift.errors import UserError
from deepsift.llm.chat import chat_model
from deepsift.llm.embedders import get_embedder
from deepsift.store import StoreError

from fake_openai import FakeOpenAI
from scripted import ScriptedResearcher

QUESTION = "Why was Kestrel Works built, what did it cost against its budget, and did it work?"


def test_every_citation_is_listed_and_maps_to_a_retrieved_chunk(settings, deps, scripted_llm):
    retrieved: set[str] = set()

    def collect(node, update):
        retrieved.update(update.get("chunks", {}))

    result = research(QUESTION, settings, deps=deps, on_update=collect)

    body, _, sources_part = result.report.partition("## Sources")
    cited = {int(n) for n in re.findall(r"\[(\d+)\]", body)}
    listed = {int(n) for n in re.findall(r"^\[(\d+)\]", sources_part, re.MULTILINE)}
    assert cited and cited == listed == {s.n for s in result.sources}
    assert "[999]" not in body  # a number the model was never shown is removed
    assert sorted(cited) == list(range(1, len(cited) + 1))
    cited_chunks = {
        c for s in _checkpointed_sources(settings, result.thread_id) for c in s.chunk_ids
    }
    assert cited_chunks and cited_chunks <= retrieved
    assert len({s.source for s in result.sources}) >= 2
    assert result.usage.llm_calls == len(scripted_llm.requests)


def _checkpointed_sources(settings, thread_id):
    """The graph's own record of what each [n] stands for, read back from the checkpointer."""
    with SqliteSaver.from_conn_string(str(settings.checkpoint_path)) as saver:
        checkpoint = saver.get({"configurable": {"thread_id": thread_id}})
    return checkpoint["channel_values"]["sources"]


def test_loop_follows_reflection_then_stops_when_it_asks_for_nothing(settings, deps, scripted_llm):
    result = research(QUESTION, settings, deps=deps)

    assert result.iterations == 2
    assert result.sub_queries[-1] == "River Orrin phosphorus load"
    searched = [m for r in scripted_llm.requests for m in r["messages"] if "River Orrin" in str(m)]
    assert searched, "the follow-up query reached the later prompts"


@pytest.mark.parametrize("new_evidence, asked", [(False, 0), (True, 1)])
def test_reflection_is_asked_again_only_when_the_top_excerpts_changed(
    settings, deps, scripted_llm, new_evidence, asked
):
    from deepsift.nodes.reflect import EXCERPTS, reflect
    from deepsift.records import Chunk

    chunks = {
        f"c{n}": Chunk(id=f"c{n}", text=f"text {n}", source="s", title="t", collection="science")
        for n in range(EXCERPTS + 2)
    }
    top_before = [f"c{n}" for n in range(EXCERPTS)]
    if new_evidence:  # a chunk the last round found outranks the ones reflection saw
        chunks["c9"] = chunks["c9"].model_copy(update={"fused": 1.0})
    state = {
        "question": QUESTION,
        "sub_queries": ["Kestrel Works cost", "Lake Veldmere phosphorus"],
        "chunks": chunks,
        "iteration": 2,
        "max_iterations": 3,
        "sources_to_search": ["science"],
        "reflected_on": top_before,
    }

    reflect(state, deps)

    assert _asked(scripted_llm).count("Reflection") == asked


def test_reflection_on_an_endpoint_reads_the_top_excerpts_whole(settings, deps, scripted_llm):
    from deepsift.nodes.reflect import reflect
    from deepsift.records import Chunk

    text = "The film Orrin Light was shot in 1961. " * 12 + "Its director was Tam Reid."
    chunk = Chunk(id="c1", text=text, source="s", title="Orrin Light", collection="science")
    state = {
        "question": "Who is the mother of the director of Orrin Light?",
        "sub_queries": ["Orrin Light director"],
        "chunks": {"c1": chunk},
        "iteration": 1,
        "max_iterations": 3,
        "sources_to_search": ["science"],
    }

    reflect(state, deps)

    prompt = str(scripted_llm.requests[-1]["messages"])
    assert _asked(scripted_llm) == ["Reflection"] and "Its director was Tam Reid." in prompt


def _asked(server) -> list[str]:
    """The schema each request asked for, in order."""
    return [
        (r.get("response_format") or {}).get("json_schema", {}).get("name") for r in server.requests
    ]


def test_max_iterations_bounds_the_loop_without_asking_reflection(settings, deps, scripted_llm):
    result = research(QUESTION, settings, deps=deps, max_iterations=1)

    assert result.iterations == 1
    assert "Reflection" not in _asked(scripted_llm)


@pytest.mark.parametrize("budget, rounds", [(21, 1), (22, 2)])
def test_the_llm_call_budget_bounds_the_loop_and_is_never_overrun(settings, deps, budget, rounds):
    # After decompose + route (2 calls) with 3 sub-queries, another round may cost reflect +
    # route + 6 sections + frame + headings, each structured call counted with its retry (20
    # calls): it fits in 22 calls, not in 21.
    deps.settings = settings.model_copy(update={"max_llm_calls": budget})

    result = research(QUESTION, settings, deps=deps, max_iterations=5)

    assert result.iterations == rounds
    assert result.usage.llm_calls <= budget


def test_a_finished_thread_is_reread_not_rerun(settings, deps, scripted_llm):
    first = research(QUESTION, settings, deps=deps, thread_id="t1")
    calls = len(scripted_llm.requests)

    again = research("", settings, deps=deps, thread_id="t1")

    assert again.report == first.report
    assert len(scripted_llm.requests) == calls


def test_unknown_collection_is_refused_before_any_llm_call(settings, deps, scripted_llm):
    with pytest.raises(StoreError, match="no collection named 'nope'"):
        research(QUESTION, settings, deps=deps, collections=["nope"])
    assert scripted_llm.requests == []


def test_collections_restrict_where_the_searches_go(settings, deps):
    result = research(QUESTION, settings, deps=deps, collections=["science"], max_iterations=1)

    assert result.sources and all("/science/" in s.source for s in result.sources)


def test_an_interrupted_run_resumes_from_its_checkpoint_without_redoing_steps(settings, deps):
    from deepsift.llm.chat import chat_model

    from fake_openai import FakeOpenAI
    from scripted import ScriptedResearcher

    def fails_at_synthesis(body):
        if "Answered" in str(body.get("response_format")):
            raise RuntimeError("the endpoint went away")
        return ScriptedResearcher(follow_ups=[])(body)

    with FakeOpenAI(fails_at_synthesis) as broken:
        deps.llm = chat_model(settings.model_copy(update={"llm_base_url": broken.url}))
        with pytest.raises(Exception, match="went away"):
            research(QUESTION, settings, deps=deps, thread_id="resume-me")

    with FakeOpenAI(ScriptedResearcher()) as working:
        deps.llm = chat_model(settings.model_copy(update={"llm_base_url": working.url}))
        result = research("", settings, deps=deps, thread_id="resume-me")
        asked = [
            (r.get("response_format") or {}).get("json_schema", {}).get("name")
            for r in working.requests
        ]

    # Decompose, route, search and reflect were not redone: only the report was written (its
    # sections, its frame, and the claim check's rewrites, CitedText).
    report_calls = {"Answered", "ReportFrame"}
    assert report_calls <= set(asked) <= report_calls | {"CitedText"}
    assert result.sources and result.question == QUESTION


@pytest.mark.parametrize(
    "rephrasing",
    [
        "Why was the Kestrel Works built?",  # a sub-query, reworded
        # the question itself, which the first round searched: the embedded model's habit
        "Why did Kestrel Works get built, what did it cost against its budget, and did it work?",
    ],
)
def test_a_follow_up_that_only_rephrases_a_searched_query_ends_the_loop(settings, deps, rephrasing):
    from deepsift.llm.chat import chat_model

    from fake_openai import FakeOpenAI
    from scripted import SUB_QUERIES, ScriptedResearcher

    rephrased = ScriptedResearcher(follow_ups=[rephrasing])
    assert rephrasing.casefold() not in (q.casefold() for q in [QUESTION, *SUB_QUERIES])
    with FakeOpenAI(rephrased) as server:
        deps.llm = chat_model(settings.model_copy(update={"llm_base_url": server.url}))
        result = research(QUESTION, settings, deps=deps)

    assert result.iterations == 1
    assert result.sub_queries == SUB_QUERIES


def test_an_unknown_thread_without_a_question_is_a_clear_error(settings, deps):
    with pytest.raises(UserError, match="no run has thread id ghost"):
        research("", settings, deps=deps, thread_id="ghost")


class RetriedEveryTime(ScriptedResearcher):
    """Every structured call's first reply is broken, so each one is asked twice."""

    def __call__(self, body):
        complaint = body["messages"][-1]["content"]
        if not str(complaint).startswith("That reply was not valid"):
            return "this is not JSON"
        return super().__call__({**body, "messages": body["messages"][:-2]})


def test_the_call_budget_holds_when_every_structured_call_needs_its_retry(tmp_path, sample_store):
    budget = 13
    with FakeOpenAI(RetriedEveryTime()) as server:
        settings = Settings(
            data_dir=tmp_path, llm_base_url=server.url, llm_api_key="t", max_llm_calls=budget
        )
        deps = Deps(settings, sample_store, get_embedder(settings), chat_model(settings))

        result = research(QUESTION, settings, deps=deps, max_iterations=3)

    retries = [r for r in server.requests if "That reply was not valid" in str(r["messages"])]
    assert len(retries) * 2 == len(server.requests) == result.usage.llm_calls
    assert result.usage.llm_calls <= budget
    assert result.report.count("\n## ") >= 2  # sections still written within the budget


def test_records_that_a_checkpoint_saved_under_their_old_module_still_load(tmp_path):
    from deepsift.records import Chunk, Usage
    from deepsift.run.state import allow_state_types

    class OldChunk(Chunk):  # Chunk as runs saved it before it moved to deepsift.records
        pass

    OldChunk.__module__, OldChunk.__name__ = "deepsift.state", "Chunk"
    with SqliteSaver.from_conn_string(str(tmp_path / "checkpoints.sqlite")) as saver:
        allow_state_types(saver)
        old = OldChunk(id="a", text="t", source="s", title="T", collection="c")
        saved = saver.serde.dumps_typed({"chunk": old, "usage": Usage(llm_calls=2)})
        loaded = saver.serde.loads_typed(saved)

    assert b"deepsift.state" in saved[1]
    assert type(loaded["chunk"]) is Chunk and loaded["chunk"].title == "T"
    assert loaded["usage"].llm_calls == 2
