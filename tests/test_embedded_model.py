"""The one test that runs the real embedded chat model (about two minutes on two cores)."""

import re

import pytest

from deepsift import Settings, research
from deepsift.deps import Deps
from deepsift.llm.chat import chat_model
from deepsift.llm.embedders import get_embedder
from deepsift.report.evidence.documents import label_of


@pytest.mark.embedded_model
def test_embedded_model_writes_a_short_cited_report(sample_store, tmp_path):
    settings = Settings(
        data_dir=tmp_path / "data",
        max_sub_queries=2,
        max_iterations=1,
        report_length="brief",
    )
    assert settings.uses_local_llm
    deps = Deps(settings, sample_store, get_embedder(settings), chat_model(settings))
    retrieved: dict = {}

    result = research(
        "What budget did the board approve for Kestrel Works, and what did it cost in the end?",
        settings,
        deps=deps,
        on_update=lambda node, update: retrieved.update(update.get("chunks", {})),
    )

    assert 1 <= len(result.sub_queries) <= 2
    assert result.usage.llm_calls >= 4 and result.usage.completion_tokens > 0
    body, _, listing = result.report.partition("## Sources")
    cited = {int(n) for n in re.findall(r"\[(\d+)\]", body)}
    assert cited, f"the embedded model cited no excerpt:\n{result.report}"
    assert cited == {s.n for s in result.sources}
    assert all(f"[{n}]" in listing for n in cited)
    found = {(label_of(chunk), chunk.source) for chunk in retrieved.values()}
    assert {(s.title, s.source) for s in result.sources} <= found
