"""One owner for the sources a run may search: every entry point refuses a bad one alike."""

import asyncio

import pytest

from deepsift import studio
from deepsift.agents import AGENTS
from deepsift.errors import UserError

from conftest import CORPUS, run_cli

DEAD_LLM = "http://127.0.0.1:9/v1"  # never called: the sources are checked first


BAD = {
    "nope": "no collection named 'nope'; existing: science",
    "web": "the web source needs a Tavily API key",
}


def test_studio_and_the_cli_refuse_a_bad_source_with_the_same_line(tmp_path):
    data = tmp_path / "data"
    ingest = ["ingest", str(CORPUS / "science"), "--collection", "science", "--description", "d"]
    assert run_cli(*ingest, data=data).returncode == 0
    lines = {}
    for name, message in BAD.items():
        cli = run_cli(
            "research",
            "What is Kestrel Works?",
            "--collections",
            name,
            data=data,
            DEEPSIFT_LLM_BASE_URL=DEAD_LLM,
        )
        assert cli.returncode == 2
        (lines[name],) = [line for line in cli.stderr.splitlines() if line.strip()]
        assert lines[name].startswith("error: ") and message in lines[name]

    # The Studio graph, as `langgraph dev` builds and runs it (its store stays open there).
    config = {"configurable": {"data_dir": str(data), "llm_base_url": DEAD_LLM}}
    graph = asyncio.run(studio.graph(config))
    for name in BAD:
        with pytest.raises(UserError) as refused:
            graph.invoke({"question": "What is Kestrel Works?", "sources_to_search": [name]})
        assert f"error: {refused.value}" == lines[name]

    assert graph.config["recursion_limit"] == AGENTS["deepsift"].step_limit(3)  # the default bound
