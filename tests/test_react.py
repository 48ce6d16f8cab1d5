import json

import pytest
from test_eval import write_2wiki

from deepsift.agents import fewshot
from deepsift.agents.react import majority, parse_reply
from deepsift.api import research
from deepsift.config import Settings
from deepsift.deps import Deps
from deepsift.errors import RunStopped
from deepsift.llm.chat import chat_model
from deepsift.llm.embedders import get_embedder
from deepsift.prompts.react_examples import EXAMPLES

from conftest import run_cli
from fake_openai import FakeOpenAI
from scripted import REACT_SYSTEM, VOTE_SYSTEM, ScriptedReAct, last_observation

QUESTION = "What share of the Kestrel Works capital budget was its risk contingency?"
SEARCH = "Kestrel Works capital budget risk contingency"
SEARCH_THEN_CALCULATE = [
    f"Thought: I need the budget and the contingency.\nAction: search[{SEARCH}]",
    "Thought: The budget is 24.6 million with 1.8 million contingency [1].\n"
    "Action: calculate[1.8 / 24.6 * 100]",
    lambda body: f"Thought: That is the share.\nAction: finish[{last_observation(body)}%]",
]


def run(tmp_path, sample_store, responder, question=QUESTION, **kwargs):
    with FakeOpenAI(responder) as llm:
        settings = Settings(
            data_dir=tmp_path / "data",
            llm_base_url=llm.url,
            llm_api_key="t",
            **kwargs.pop("settings", {}),
        )
        deps = Deps(settings, sample_store, get_embedder(settings), chat_model(settings))
        result = research(question, settings, agent="react", deps=deps, **kwargs)
    return result, llm.requests


def calls(requests, system):
    return [r for r in requests if r["messages"][0]["content"].startswith(system)]


def test_a_search_then_a_calculation_ends_with_the_computed_answer_and_a_cited_report(
    tmp_path, sample_store
):
    result, requests = run(tmp_path, sample_store, ScriptedReAct(SEARCH_THEN_CALCULATE))

    reasoning = calls(requests, REACT_SYSTEM)
    assert len(reasoning) == 3 and all(r["stop"] == ["Observation:"] for r in reasoning)
    searched = reasoning[1]["messages"][-1]["content"]
    assert searched.startswith("Observation: [1] (document ") and "<excerpt>" in searched
    assert "24.6" in searched  # the board minutes' budget resolution
    assert reasoning[2]["messages"][-1]["content"] == "Observation: 7.317073171"
    assert result.agent == "react" and result.status == "done"
    assert result.answer == "7.317073171%" and result.answered_by == "react"
    assert [(s.action, s.argument) for s in result.trace] == [
        ("search", SEARCH),
        ("calculate", "1.8 / 24.6 * 100"),
        ("finish", "7.317073171%"),
    ]
    assert result.trace[0].observation.startswith("[1] ") and result.sub_queries == [SEARCH]
    assert "**Answer:** 7.317073171%" in result.report and "## Sources" in result.report
    findings = result.report.split("## Findings", 1)[1].split("##", 1)[0]
    assert result.sources and "[1]" in findings and "left out" not in result.report


def test_the_prompt_carries_the_examples_most_like_the_question(tmp_path, sample_store):
    result, requests = run(tmp_path, sample_store, ScriptedReAct(SEARCH_THEN_CALCULATE))

    system = calls(requests, REACT_SYSTEM)[0]["messages"][0]["content"]
    chosen = fewshot.choose(QUESTION, get_embedder(Settings()), 3)
    assert all(EXAMPLES[i]["question"] in system for i in chosen)
    assert sum(example["question"] in system for example in EXAMPLES) == 3
    assert "Action: calculate[" in system and "Observation: " in system


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("How many days were there between the launch of the ship and its sinking?", "dates"),
        ("How long is the canal path in miles if it is 40 kilometres?", "units"),
        ("Where was the founder of the company that makes the Lumo lamp born?", "multi-hop"),
    ],
)
def test_few_shot_selection_picks_examples_of_the_same_kind(question, kind):
    embedder = get_embedder(Settings())

    chosen = fewshot.choose(question, embedder, 3)

    kinds = [EXAMPLES[i]["kind"] for i in chosen]
    assert kinds.count(kind) >= 2, kinds


def test_the_example_library_covers_every_kind_and_its_calculations_work():
    kinds = [example["kind"] for example in EXAMPLES]
    assert len(EXAMPLES) >= 30
    assert {"search-then-calculate", "comparison", "multi-hop", "dates", "units", "not found"} <= (
        set(kinds)
    )
    for index, example in enumerate(EXAMPLES):
        assert example["steps"][-1][1] == "finish"
        text = fewshot.render(index)
        assert "Observation: Error" not in text, text


@pytest.mark.parametrize(
    ("reply", "parsed"),
    [
        (
            "Thought: I need it.\nAction: search[Kestrel budget]",
            ("I need it.", "search", "Kestrel budget"),
        ),
        (
            "thought:   need it\naction :  Search ( Kestrel budget )",
            ("need it", "search", "Kestrel budget"),
        ),
        (
            "I need the sum.\ncalculate[(1 + 2) * [3]]",
            ("I need the sum.", "calculate", "(1 + 2) * [3]"),
        ),
        (
            "Thought: x\nAction: calculate((1200 - 950) / 950) and then more text",
            ("x", "calculate", "(1200 - 950) / 950"),
        ),
        ("```\nThought: done\nAction: finish[Marrowby]\n```", ("done", "finish", "Marrowby")),
        (
            "Thought: done\nAction: finish[Marrowby]\nObservation: imagined",
            ("done", "finish", "Marrowby"),
        ),
        ("<think>hmm</think>Thought: ok\nAction: Final Answer[42]", ("ok", "finish", "42")),
        ("Thought: ok\nFinal answer: Marrowby", ("Thought: ok", "finish", "Marrowby")),
        ("Thought: ok\nAction: search Kestrel budget", ("ok", "search", "Kestrel budget")),
        (
            "Thought: unclosed\nAction: search[Kestrel budget",
            ("unclosed", "search", "Kestrel budget"),
        ),
        ("**Thought:** bold\n**Action:** think[it over]", ("bold", "think", "it over")),
    ],
)
def test_replies_are_read_tolerantly(reply, parsed):
    thought, action, argument = parse_reply(reply)
    assert (action, argument) == parsed[1:]
    assert thought == parsed[0].removeprefix("Thought: ") or thought == parsed[0]


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        ("I should look this up somewhere.", "no line 'Action: ...'"),
        ("Thought: x\nAction: lookup[Kestrel]", "unknown action 'lookup[Kestrel]'"),
        ("Thought: x\nAction: search[]", "search[...] was empty"),
        ("", "the reply was empty"),
    ],
)
def test_a_reply_without_a_valid_action_says_why(reply, why):
    with pytest.raises(ValueError, match=rf"^{__import__('re').escape(why)}$"):
        parse_reply(reply)


def test_a_malformed_action_gets_an_observation_saying_why_and_the_loop_goes_on(
    tmp_path, sample_store
):
    replies = [
        "I should look this up somewhere.",
        "Thought: let me see\nAction: lookup[Kestrel budget]",
        "Thought: I know it now.\nAction: finish[Marrowby]",
    ]

    result, requests = run(tmp_path, sample_store, ScriptedReAct(replies))

    reasoning = calls(requests, REACT_SYSTEM)
    first, second = (r["messages"][-1]["content"] for r in reasoning[1:3])
    assert first.startswith("Observation: Your reply had no valid action: no line 'Action: ...'.")
    assert "'Action: search[query]'" in first and "'Action: finish[answer]'" in first
    assert second.startswith("Observation: Your reply had no valid action: unknown action")
    assert reasoning[1]["messages"][-2] == {"role": "assistant", "content": replies[0]}
    assert [s.action for s in result.trace] == ["invalid", "invalid", "finish"]
    assert result.answer == "Marrowby" and result.answered_by == "react"


def test_at_max_steps_self_consistency_votes_and_the_vote_is_recorded(tmp_path, sample_store):
    replies = [
        f"Thought: search first.\nAction: search[{SEARCH}]",
        "Thought: and compute.\nAction: calculate[1.8 / 24.6 * 100]",
        "Thought: one more.\nAction: search[River Orrin]",
    ]
    responder = ScriptedReAct(replies, votes=["Marrowby", "Orrin", "marrowby."])

    result, requests = run(tmp_path, sample_store, responder, max_steps=2)

    assert len(calls(requests, REACT_SYSTEM)) == 2
    samples = calls(requests, VOTE_SYSTEM)
    assert sorted(r["seed"] for r in samples) == [0, 1, 2]
    assert all(r["temperature"] == 0.7 for r in samples)
    shown = samples[0]["messages"][-1]["content"]
    assert "[1] (document " in shown and f"- search[{SEARCH}]: [1] " in shown
    assert result.answered_by == "self-consistency" and result.answer == "Marrowby"
    assert result.votes == {"Marrowby": 2, "Orrin": 1}
    assert "**Answer:** Marrowby" in result.report and "(2 of them)" in result.report
    assert "2 actions taken" in result.report


def test_replies_without_actions_in_a_row_end_the_loop_in_the_vote(tmp_path, sample_store):
    result, requests = run(tmp_path, sample_store, ScriptedReAct(["I am not sure."]))

    assert len(calls(requests, REACT_SYSTEM)) == 3
    assert [s.action for s in result.trace] == ["invalid"] * 3
    assert result.answered_by == "self-consistency" and result.votes == {"Marrowby": 3}


def test_the_budget_ends_the_loop_with_room_for_the_vote_and_the_report(tmp_path, sample_store):
    replies = [f"Thought: again.\nAction: search[budget question {n}]" for n in range(20)]

    result, requests = run(
        tmp_path, sample_store, ScriptedReAct(replies), settings={"max_llm_calls": 12}
    )

    assert result.answered_by == "self-consistency"
    assert result.usage.llm_calls <= 12 and len(calls(requests, VOTE_SYSTEM)) == 3


def test_majority_compares_normalised_answers_and_keeps_the_first_spelling():
    assert majority(["The Orrin.", "Marrowby", "orrin"]) == (
        "The Orrin.",
        {"The Orrin.": 2, "Marrowby": 1},
    )
    assert majority([]) == ("", {})


def test_a_run_stopped_by_its_endpoint_resumes_by_thread_without_asking_again(
    tmp_path, sample_store
):
    responder = ScriptedReAct(SEARCH_THEN_CALCULATE)

    def third_reply(body):
        return (
            body["messages"][0]["content"].startswith(REACT_SYSTEM)
            and sum(m["role"] == "assistant" for m in body["messages"]) == 2
        )

    with FakeOpenAI(responder, dies_at=third_reply) as dying:
        settings = Settings(
            data_dir=tmp_path / "data", llm_base_url=dying.url, llm_api_key="t", llm_retries=0
        )
        deps = Deps(settings, sample_store, get_embedder(settings), chat_model(settings))
        with pytest.raises(RunStopped) as stopped:
            research(QUESTION, settings, agent="react", deps=deps)
    thread = stopped.value.thread_id
    with FakeOpenAI(responder) as llm:
        settings = settings.model_copy(update={"llm_base_url": llm.url})
        deps = Deps(settings, sample_store, get_embedder(settings), chat_model(settings))
        resumed = research(thread_id=thread, settings=settings, deps=deps)

    assert len(calls(dying.requests, REACT_SYSTEM)) == 2
    assert len(calls(llm.requests, REACT_SYSTEM)) == 1  # only the reply that failed
    assert resumed.agent == "react" and resumed.answer == "7.317073171%"
    assert [s.action for s in resumed.trace] == ["search", "calculate", "finish"]


def test_the_graph_command_draws_the_react_agent(tmp_path):
    result = run_cli("graph", "--agent", "react", data=tmp_path / "data")

    assert result.returncode == 0, result.stderr
    for edge in (
        "__start__ --> reason;",
        "reason -.-> search;",
        "reason -.-> calculate;",
        "reason -.-> vote;",
        "search --> reason;",
        "vote --> finish;",
    ):
        assert edge in result.stdout


EVAL_REPLIES = [
    "Thought: who is Orla Venn?\nAction: search[Orla Venn painter born]",
    "Thought: Marrowby [1]. What is it?\nAction: search[Marrowby town]",
    "Thought: found it.\nAction: finish[Marrowby]",
]


@pytest.mark.parametrize("mode", ["retrieval", "answers"])
def test_eval_runs_react_and_scores_what_it_gathered_and_answered(tmp_path, mode):
    dataset = write_2wiki(tmp_path / "wiki.json")
    out = tmp_path / mode

    with FakeOpenAI(ScriptedReAct(EVAL_REPLIES)) as llm:
        result = run_cli(
            "eval",
            mode,
            "--dataset",
            str(dataset),
            "--agents",
            "naive,react",
            "--max-steps",
            "4",
            "--limit",
            "1",
            "--out",
            str(out),
            data=tmp_path / "data",
            DEEPSIFT_LLM_BASE_URL=llm.url,
            DEEPSIFT_LLM_API_KEY="k",
        )

    assert result.returncode == 0, result.stderr
    rows = {r["agent"]: r for r in map(json.loads, (out / "results.jsonl").open())}
    react = rows["react"]
    assert (react["max_iterations"], react["rounds"], react["error"]) == (4, 2, None)
    assert set(react["ranked_titles"][:2]) == {"Orla Venn", "Marrowby"}
    assert react["queries"] == ["Orla Venn painter born", "Marrowby town"]
    if mode == "retrieval":
        assert react["llm_calls"] == 3  # three replies; no report
    else:
        assert react["llm_calls"] == 4  # and the report
        assert (react["prediction"], react["em"], react["f1"]) == ("Marrowby", 1.0, 1.0)
        assert react["answered_by"] == "react"
    assert "| react | 4 | 1 |" in result.stdout


def test_a_sample_that_echoes_a_placeholder_gives_no_vote():
    from deepsift.agents.react import _sampled_answer

    assert _sampled_answer("It is unclear.\nAnswer: <the short answer: a name>") == ""
    assert _sampled_answer("From [2].\nAnswer: **Lyon**.") == "Lyon"
    assert _sampled_answer("The excerpts say Lyon.") == "The excerpts say Lyon"
