"""The question's parts, read from its wording (deepsift.report.question.parts), and each part's
evidence sentences, chosen in code (deepsift.report.evidence.sentences)."""

import pytest

from deepsift.records import Chunk
from deepsift.report.evidence.sentences import as_prose, reads_alone, sentences_of
from deepsift.report.question.parts import (
    part_items,
    part_queries,
    part_searches,
    question_parts,
    with_names,
)

DEMO = (
    "Why was the Kestrel Works treatment plant built, how much did it cost in the end compared "
    "with its approved budget, and did it reduce phosphorus levels in Lake Veldmere?"
)


def test_questions_asked_one_after_another_are_its_parts():
    assert question_parts(DEMO) == [
        "Why was the Kestrel Works treatment plant built",
        "How much did it cost in the end compared with its approved budget",
        "Did it reduce phosphorus levels in Lake Veldmere",
    ]
    assert question_parts("What caused the anomaly and how did the Authority respond?") == [
        "What caused the anomaly",
        "How did the Authority respond",
    ]


def test_a_report_asked_on_a_list_has_a_part_for_each_item():
    asked = (
        "Write a report on how X evolved: from the first RFC and the pinning API, through the "
        "await syntax, to later additions such as async closures, async iterators and gen "
        "blocks. For each step, say what was added."
    )
    # A sentence that opens with an instruction says how to treat the parts too.
    instructed = asked.replace("For each step, say what was added.", "Give figures where stated.")
    assert (
        question_parts(asked)
        == question_parts(instructed)
        == [
            "The first RFC",
            "The pinning API",
            "The await syntax",
            "Async closures",
            "Async iterators",
            "Gen blocks",
        ]
    )


def test_a_range_of_years_is_a_part_a_year_and_an_and_inside_a_name_stays():
    asked = (
        "Write a report on the plans: the 2016 RFC, the roadmaps for 2017 through 2019, "
        "and the goals."
    )
    assert question_parts(asked) == [
        "The 2016 RFC",
        "The roadmaps for 2017",
        "The roadmaps for 2018",
        "The roadmaps for 2019",
        "The goals",
    ]
    both = (
        "Describe: how editions began, how the 2021 and 2024 editions changed purpose and "
        "cadence, and which keywords came."
    )
    assert "How the 2021 and 2024 editions changed purpose and cadence" in question_parts(both)


def test_one_question_has_no_parts_and_an_aside_is_not_one():
    assert question_parts("Who founded the Veldmere Water Authority?") == []
    assert question_parts("Besides Kestrel Works, what was tried, and what did it show?") == [
        "What was tried",
        "What did it show",
    ]


def test_each_side_of_a_comparison_is_searched_with_the_question_s_names():
    part = "How much did it cost in the end compared with its approved budget"
    assert part_queries(part) == [part, "How much did it cost in the end", "its approved budget"]
    assert "kestrel" in with_names("its approved budget", DEMO)


def test_evidence_is_prose_no_headings_code_rules_or_broken_pieces():
    chunk = Chunk(
        id="c",
        text=(
            "Report > Costs\n\n# Costs\n\nSUMMARY ------------\nThe final cost was EUR 29.3 "
            "million in total.\n\n```\nlet x = f(a, b);\n```\nand the rest of a line the page "
            "broke off.\n| Item | EUR million |\n|---|---|\n| Total out-turn cost | 29.3 |\n\n"
            "Should the final cost of the works be published every year?"
        ),
        source="r.md",
        title="Report",
        collection="c",
    )

    said = sentences_of(chunk)

    assert "SUMMARY The final cost was EUR 29.3 million in total." not in said
    assert "The final cost was EUR 29.3 million in total." in said
    assert not any("let x" in s or s.startswith("and the rest") for s in said)
    assert "Total out-turn cost: 29.3" not in said  # too short to stand as a sentence
    assert not any(s.endswith("?") for s in said)  # a document's open question states no fact


def test_a_sentence_that_leans_on_the_one_before_is_restated_and_others_stand():
    assert reads_alone("The Board approved a budget of EUR 24.6 million.")
    assert not reads_alone("It cost more and took longer than planned.")
    assert not reads_alone("Location: Kestrel Weir on the River Orrin")
    assert as_prose("**design** removal: 12.5 t/yr") == "Design removal: 12.5 t/yr."
    assert as_prose("<excerpt>It ran.</excerpt>") == "It ran."


def test_a_list_inside_an_item_and_a_question_with_two_subjects_stay_one_part():
    asked = (
        "Write a report on the opcode: its renaming, how its gas cost and the rebate changed, "
        "the proposals to discourage, neuter or deactivate it, the changes to how validators "
        "join, leave and hold balances, and the cost of state creation and state access."
    )
    assert question_parts(asked) == [
        "Its renaming",
        "How its gas cost and the rebate changed",
        "The proposals to discourage, neuter or deactivate it",
        "The changes to how validators join, leave and hold balances",
        "The cost of state creation and state access",
    ]


def test_for_each_member_of_a_range_is_a_part():
    asked = (
        "Write a report on how the wire protocol evolved across its versions 64 through 66: "
        "for each version, what was added, changed or removed, and the motivation given."
    )
    assert question_parts(asked) == [
        f"How the wire protocol evolved across its version {n}" for n in (64, 65, 66)
    ]


def test_a_part_that_says_it_is_also_searched_with_the_question_s_subject():
    asked = "Write a report on the self-destruct opcode: its renaming, and the gas refunds."
    searches = part_searches("Its renaming", asked)
    assert "Its renaming: the self-destruct opcode" in searches
    assert "Its renaming" in searches  # bare too: the names would pull toward the subject
    own = part_searches("The gas refunds", asked)
    assert "The gas refunds: the self-destruct opcode" not in own


def test_a_part_is_also_searched_with_the_things_the_subject_names_that_it_lacks():
    """ "The first throughput increase" of a report on blob capacity is the first blob
    throughput increase; how the subject is said ("specified and scaled") adds nothing."""
    asked = (
        "Write a report on how Ethereum's blob data capacity has been specified and scaled: the "
        "original blob-carrying transaction, and the first throughput increase."
    )
    searches = part_searches("The first throughput increase", asked)
    assert "The first throughput increase blob data capacity" in searches
    assert "The first throughput increase" in searches
    assert not any("scaled" in s or "specified" in s for s in searches)


@pytest.mark.parametrize(
    ("part", "items"),
    [
        (
            "Which changes (keywords, reserved syntax, preludes) were tied to editions",
            [
                "keywords: Which changes were tied to editions",
                "reserved syntax: Which changes were tied to editions",
                "preludes: Which changes were tied to editions",
            ],
        ),
        (
            "How the 2021 and 2024 Edition RFCs redefined their cadence",
            [
                "How the 2021 Edition RFCs redefined their cadence",
                "How the 2024 Edition RFCs redefined their cadence",
            ],
        ),
        ("Blob counts between 2019 and 2020", []),
        ("How much did it cost (in EUR)", []),
    ],
)
def test_each_thing_a_part_lists_is_searched_on_its_own(part, items):
    assert part_items(part) == items
    assert part_queries(part) == [part, *items]
