"""The scripted model the tests run against: its replies must not depend on test order."""

from scripted import ScriptedResearcher


def reflection_request(question: str) -> dict:
    return {
        "messages": [
            {"role": "system", "content": "You review research in progress."},
            {"role": "user", "content": f"Question: {question}\n\nQueries already searched:\n"},
        ],
        "response_format": {"type": "json_schema", "json_schema": {"name": "Reflection"}},
    }


def test_each_question_gets_its_follow_up_on_its_own_first_reflection():
    model = ScriptedResearcher(follow_ups=["more"])

    assert model(reflection_request("first question?")) == {"queries": ["more"]}
    assert model(reflection_request("first question?")) == {"queries": []}
    assert model(reflection_request("second question?")) == {"queries": ["more"]}
