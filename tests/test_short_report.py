"""The answering agents' short report (Search-o1, ReAct): its findings are held to the
excerpts they cite, like the deepsift report's sentences."""

from deepsift.config import Settings
from deepsift.deps import Deps
from deepsift.llm.chat import chat_model
from deepsift.records import Chunk
from deepsift.report.writing.short_report import short_report

from fake_openai import FakeOpenAI

BUDGET = Chunk(
    id="a",
    text="The board approved a capital budget of EUR 24.6 million, including a contingency "
    "of EUR 1.8 million.",
    source="/minutes.md",
    title="Board minutes",
    collection="operations",
)
FINDINGS = {
    "sentences": [
        {"text": "The approved budget was EUR 24.6 million.", "excerpts": [1]},
        {"text": "The contingency was 7.3% of the budget.", "excerpts": [1]},  # the answer
        {"text": "The final cost was EUR 31.2 million.", "excerpts": [1]},  # in no excerpt
    ]
}


def test_a_finding_the_excerpts_do_not_hold_is_left_out_and_the_notes_say_so(tmp_path):
    with FakeOpenAI(lambda body: FINDINGS) as llm:
        settings = Settings(data_dir=tmp_path, llm_base_url=llm.url, llm_api_key="t")
        deps = Deps(settings, None, None, chat_model(settings))
        report, sources, usage = short_report(
            "What share of the budget was contingency?", "7.3%", [BUDGET], [], deps
        )

    assert "EUR 24.6 million [1]" in report and "7.3% of the budget [1]" in report
    assert "31.2" not in report
    assert "1 sentence(s) left out" in report.split("## Notes", 1)[1]
    assert (usage.claims_checked, usage.claims_dropped) == (3, 1)
    assert [s.n for s in sources] == [1]
