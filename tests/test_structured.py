import pytest
from pydantic import BaseModel

from deepsift.llm.chat import chat_model
from deepsift.llm.structured import ask_structured, parse_json

from fake_openai import FakeOpenAI


class Queries(BaseModel):
    queries: list[str]


@pytest.mark.parametrize(
    "reply",
    [
        '{"queries": ["a", "b"]}',
        '<think>maybe {"queries": []} first</think>{"queries": ["a", "b"]}',
        'Sure! Here it is:\n```json\n{"queries": ["a", "b"]}\n```\nAnything else?',
        '{"queries": ["a", "b"],}',
        '{"queries": ["a", "b"',
        "{'queries': ['a', 'b']}",
        'The plan: {"queries": ["a", "b"]} -- done.',
    ],
)
def test_tolerant_parser_reads_what_small_models_write(reply):
    assert parse_json(reply, Queries).queries == ["a", "b"]


@pytest.mark.parametrize("reply", ["", "no json here", '{"other": 1}', "<think>only thinking"])
def test_parser_rejects_replies_without_the_schema(reply):
    with pytest.raises(ValueError, match="Queries"):
        parse_json(reply, Queries)


def _settings_for(server, tmp_path):
    from deepsift.config import Settings

    return Settings(data_dir=tmp_path, llm_base_url=server.url, llm_api_key="k")


def test_a_bad_reply_is_retried_with_the_error_then_accepted(tmp_path):
    replies = iter(["I cannot do JSON", '{"queries": ["x"]}'])
    with FakeOpenAI(lambda body: next(replies)) as server:
        llm = chat_model(_settings_for(server, tmp_path))
        result, usage = ask_structured(llm, [("human", "plan")], Queries)

    assert result == Queries(queries=["x"])
    assert usage.llm_calls == 2
    retry = server.requests[1]["messages"]
    assert "not valid" in retry[-1]["content"]
    assert server.requests[0]["response_format"]["json_schema"]["name"] == "Queries"


def test_structured_output_degrades_to_none_instead_of_crashing(tmp_path):
    with FakeOpenAI(lambda body: "still not json") as server:
        llm = chat_model(_settings_for(server, tmp_path))
        result, usage = ask_structured(llm, [("human", "plan")], Queries, attempts=3)

    assert result is None
    assert usage.llm_calls == 3 and usage.prompt_tokens > 0


def test_a_reply_cut_at_the_token_limit_is_repaired_not_fatal(tmp_path):
    with FakeOpenAI(lambda body: '{"queries": ["a", "b') as server:
        llm = chat_model(_settings_for(server, tmp_path))
        result, usage = ask_structured(llm, [("human", "plan")], Queries, max_tokens=5)

    assert result == Queries(queries=["a", "b"])
    assert usage.llm_calls == 1


def test_every_structured_call_is_bounded_in_length(tmp_path):
    with FakeOpenAI(lambda body: '{"queries": []}') as server:
        ask_structured(chat_model(_settings_for(server, tmp_path)), [("human", "x")], Queries)

    assert server.requests[0]["max_completion_tokens"] == 400


def test_list_caps_and_sampling_fields_reach_the_request(tmp_path):
    with FakeOpenAI(lambda body: '{"queries": []}') as server:
        llm = chat_model(_settings_for(server, tmp_path))
        ask_structured(
            llm,
            [("human", "x")],
            Queries,
            most={"queries": 3},
            sampling={"dry_multiplier": 0.8},
            least={"queries": 2},
        )

    body = server.requests[0]
    listed = body["response_format"]["json_schema"]["schema"]["properties"]
    assert listed["queries"]["maxItems"] == 3 and listed["queries"]["minItems"] == 2
    assert body["dry_multiplier"] == 0.8
