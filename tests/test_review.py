import asyncio
import importlib
import json

import pytest

from deepsift.api import research
from deepsift.errors import UserError
from deepsift.retrieval.routing import edited_plan

from conftest import ROOT
from scripted import SUB_QUERIES

QUESTION = "Why was Kestrel Works built and what did it cost?"


def test_the_reviewer_sees_the_plan_and_its_edits_are_what_gets_searched(settings, deps):
    seen = []
    searched = set()

    def reviewer(pending):
        seen.append(pending)
        first = pending["routes"][0]
        return [{"query": "Kestrel Works origins", "sources": ["operations"]}, first]

    def on_update(node, change):
        if node == "search":
            searched.update((c.query, c.collection) for c in change["chunks"].values())

    result = research(
        QUESTION,
        settings,
        max_iterations=1,
        review=True,
        reviewer=reviewer,
        on_update=on_update,
        deps=deps,
    )

    assert result.status == "done"
    (pending,) = seen
    assert [r["query"] for r in pending["routes"]] == SUB_QUERIES
    assert set(pending["sources"]) == {"science", "operations"}
    assert result.sub_queries == ["Kestrel Works origins", SUB_QUERIES[0]]
    assert {c for q, c in searched if q == "Kestrel Works origins"} == {"operations"}
    # The reviewed plan, and the question itself (every run's first round searches it too).
    assert {q for q, _ in searched} == {"Kestrel Works origins", SUB_QUERIES[0], QUESTION}


def test_without_a_reviewer_the_run_pauses_and_resumes_with_the_plan_unchanged(settings, deps):
    paused = research(QUESTION, settings, review=True, max_iterations=1, deps=deps)
    assert paused.status == "paused" and paused.sub_queries == []

    done = research(
        thread_id=paused.thread_id, settings=settings, reviewer=lambda p: p["routes"], deps=deps
    )

    assert done.status == "done" and done.sub_queries == SUB_QUERIES
    assert "## Sources" in done.report


def test_a_reviewed_plan_naming_an_unknown_source_is_refused():
    sources = {"science": "", "operations": ""}
    with pytest.raises(UserError, match="item 2: no source named web"):
        edited_plan([{"query": "a"}, {"query": "b", "sources": ["web"]}], sources)
    with pytest.raises(UserError, match="item 1 has no query"):
        edited_plan([{"query": " "}], sources)
    assert edited_plan([{"query": "a"}], sources)[0].sources == ["science", "operations"]


def test_langgraph_json_names_a_graph_that_imports_compiles_and_takes_settings(tmp_path):
    spec = json.loads((ROOT / "langgraph.json").read_text())
    path, _, attribute = spec["graphs"]["deepsift"].partition(":")
    module = importlib.import_module(path.removeprefix("./").removesuffix(".py").replace("/", "."))
    config = {
        "configurable": {
            "data_dir": str(tmp_path / "studio"),
            "top_k": 7,
            "llm_base_url": "http://127.0.0.1:9/v1",
        }
    }

    graph = asyncio.run(getattr(module, attribute)(config))

    assert set(graph.nodes) >= {"decompose", "route", "review", "search", "reflect", "synthesize"}
    fields = set(graph.get_context_jsonschema()["properties"])
    assert {"top_k", "max_iterations", "llm_base_url"} <= fields
    secrets = {"llm_api_key", "embedding_api_key", "tavily_api_key", "milvus_token"}
    assert not fields & secrets and not any(f.startswith("DEEPSIFT_") for f in fields)
    assert graph.get_input_jsonschema()["required"] == ["question"]
    search = graph.nodes["search"].bound.func  # the partial holding this run's deps
    assert search.keywords["deps"].settings.top_k == 7
