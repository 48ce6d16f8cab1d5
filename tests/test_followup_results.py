"""Every follow-up answer of every public set, as measured (benchmarks/results/followups-*): prose,
never a header's fields pasted nor source markup. By rules of this test's own, not the ones that
filter the answers (deepsift.followups.questions), so it sees what the filter lets through."""

import json
import re
from pathlib import Path

import pytest

RESULTS = Path(__file__).parent.parent / "benchmarks" / "results"
SETS = ["followups-rfc", "followups-eip", "followups-examples"]
# "Title: … Author: …": a key of one or two words, a colon and a value, twice in one answer.
FIELD = re.compile(r"(?:^|[\s;,.])[A-Za-z][\w-]*(?: [A-Za-z][\w-]*)?:\s+\w")
MARKUP = re.compile(
    r"``|:[a-z]+:`|\]\(|\]\[(?!\d)|</?[a-zA-Z][a-zA-Z0-9]*(?:\s[^>]*)?>|\*\*|\bhttps?://"
)


def answers(name: str) -> list[dict]:
    rows = (RESULTS / name / "followups.jsonl").read_text().splitlines()
    return [json.loads(row) for row in rows if row.strip()]


@pytest.mark.parametrize("name", SETS)
def test_no_answer_of_a_set_is_a_header_block_or_carries_markup(name):
    rows = answers(name)
    assert len(rows) >= 20 and all("answer" in row for row in rows)
    for row in rows:
        said = row["answer"].split(" Searched: ")[0]  # what was searched quotes the question
        assert len(FIELD.findall(said)) < 2, f"{row['id']}: fields: {said}"
        assert not MARKUP.search(said), f"{row['id']}: markup: {said}"


def test_the_rules_catch_a_pasted_header_and_markup():
    assert len(FIELD.findall("Title: Style Guide Author: Guido Status: Final Type")) >= 2
    assert MARKUP.search("Use ``black`` to format")
    assert len(FIELD.findall("Grace Hopper wrote XEP 31 (Binary framing for messages) [3].")) < 2
