"""A part that sets two amounts against each other gets both and their difference, worked out
in code (deepsift.report.evidence.amounts), and the claim check holds the worked figures."""

from deepsift.records import Chunk
from deepsift.report.checks.claims import unsupported
from deepsift.report.evidence.amounts import compared_amounts, comparison

DESIGN = "Estimated capital cost: EUR 17.8 million. This would have cost about EUR 60,000."
REVIEW = "The final out-turn cost of Kestrel Works is EUR 29.3 million. It cost more than planned."
MINUTES = (
    "The Board approves a capital budget of €24.6 million, including a risk contingency of "
    "€1.8 million, for the design and construction of the plant."
)


def _chunk(n: int, text: str) -> Chunk:
    return Chunk(id=str(n), text=text, source=f"/d/{n}.md", title=f"D{n}", collection="c")


def test_a_comparing_part_gets_both_amounts_and_their_difference_citing_each():
    chunks = [_chunk(1, DESIGN), _chunk(2, REVIEW), _chunk(3, MINUTES)]
    sides = compared_amounts("how much did it cost in the end compared with its approved budget?")

    said = comparison(sides, chunks, {"1": 1, "2": 2, "3": 3})

    assert said.text == (
        "The cost was EUR 29.3 million, against an approved budget of €24.6 million: "
        "EUR 4.7 million (19%) over it."
    )
    assert said.excerpts == [2, 3]  # the estimate and the hypothetical are not the cost
    assert unsupported(said.text, [REVIEW, MINUTES]) == []
    assert unsupported("It cost EUR 29.3 million, EUR 5.7 million over.", [REVIEW, MINUTES])


def test_no_comparison_without_both_amounts_or_a_comparing_part():
    assert compared_amounts("Why was Kestrel Works built?") is None
    sides = compared_amounts("What did it cost against its budget")
    assert comparison(sides, [_chunk(2, REVIEW)], {"2": 1}) is None
