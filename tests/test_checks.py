"""A reader's checks of report sentences (deepsift.report.checks.statements): each catches its
fault and lets a faithful sentence pass; through a report, a caught sentence is rewritten or
left out with a note."""

from test_report import run

from deepsift.report.checks import statements as checks
from deepsift.report.checks.claims import hold_to_evidence
from deepsift.report.writing.cited_text import CitedSentence

from scripted import ScriptedResearcher

BUDGET = "The Board approves a capital budget of €24.6 million."
LOAN = "The project would be funded from a 25-year loan of €18.0 million and from reserves."
FINAL = "The final out-turn cost of Kestrel Works is EUR 29.3 million."


def test_two_sentences_that_say_the_same_are_caught_and_different_ones_pass():
    said = ["Kestrel Works had a final cost of EUR 29.3 million in total."]

    assert checks.repeated("The final cost of Kestrel Works was EUR 29.3 million in total.", said)
    assert not checks.repeated("The Board approved a budget of EUR 24.6 million in 2021.", said)
    assert not checks.repeated("It cost more.", ["It cost more."])  # too short to judge


def test_figures_from_two_excerpt_sentences_joined_into_one_claim_are_caught():
    stitched = "The plant cost €24.6 million, including a 25-year loan of €18.0 million."

    assert checks.stitched(stitched, [f"{BUDGET} {LOAN}"])
    # Set side by side on purpose, or both held by one sentence: no fault.
    assert not checks.stitched("It cost EUR 29.3 million against €24.6 million.", [FINAL, BUDGET])
    assert not checks.stitched("The loan of €18.0 million ran 25 years.", [LOAN])


def test_a_claim_with_no_figure_that_its_excerpts_do_not_support_is_caught():
    excerpt = ["The tunnel opened in 2019 after a cost overrun of 40 percent."]
    question = "How much did the tunnel cost?"

    caught = checks.unsupported_claim(
        "The tunnel was a significant economic success, creating thousands of jobs.",
        excerpt,
        question,
    )
    assert "economic" in caught and "success" in caught
    assert not checks.unsupported_claim(
        "The tunnel opened after a cost overrun.", excerpt, question
    )


def test_a_cause_no_excerpt_states_is_caught():
    said = "The overrun was caused by the decision to build the tunnel."

    assert checks.unstated_cause(said, ["The overrun was 40 percent."])
    assert not checks.unstated_cause(said, ["The overrun was caused by flooding in the shaft."])


OVERRUN = (
    "The final cost was EUR 29.3 million, EUR 4.7 million over the approved budget. The overrun"
    " came from three causes: the storm damage in March 2023 (EUR 2.1 million), redesign of the"
    " inlet works (EUR 1.6 million) and higher steel prices (EUR 1.0 million)."
)


def test_a_whole_amount_given_to_one_of_the_causes_it_is_split_among_is_caught():
    for said in [
        "Higher steel prices caused the EUR 4.7 million overrun.",
        "The storm damage led to a cost overrun of EUR 4.7 million.",
        "The EUR 4.7 million overrun was due to storm damage and the inlet redesign.",
    ]:
        assert "split EUR 4.7 million among several causes" in checks.unstated_cause(
            said, [OVERRUN]
        ), said


def test_a_whole_amount_given_to_all_its_causes_or_a_cause_given_its_own_share_passes():
    for said in [
        "The EUR 4.7 million overrun came from storm damage, the inlet redesign and steel prices.",
        "The EUR 4.7 million overrun was due to storm damage, the inlet redesign and steel prices.",
        "Storm damage added EUR 2.1 million.",
        "Storm damage led to EUR 2.1 million of the overrun.",
        "The overrun of EUR 4.7 million was due to three causes.",
    ]:
        assert not checks.unstated_cause(said, [OVERRUN]), said
        assert not checks.stitched(said, [OVERRUN]), said


def test_a_figure_tied_to_a_cause_no_excerpt_sentence_gives_it_is_caught():
    excerpt = (
        "Lightning struck the 20 kV line on 3 August. Phosphorus readings rose 40% over the month"
        " at the north inlet, where the buffer strip had failed."
    )
    elsewhere = "The outage on the line was caused by the strike."  # a cause, stated apart

    said = "Lightning caused a 40% rise in phosphorus."
    assert checks.unstated_cause(said, [excerpt]) == "its excerpts state no cause"
    assert checks.unstated_cause(said, [excerpt, elsewhere]) == (
        "its excerpts do not tie 40% to lightning"
    )
    # What the excerpt ties to the figure, or what the whole goes to, is no misattribution.
    failed = "Phosphorus readings rose 40% because the buffer strip had failed."
    assert not checks.unstated_cause(failed, [excerpt, elsewhere])
    spent = "The final cost of EUR 29.3 million was due to storm damage, redesign and steel."
    assert "do not tie EUR 29.3 million" in checks.unstated_cause(spent, [OVERRUN])


def test_figures_from_two_excerpt_sentences_made_equivalent_are_caught():
    excerpt = [
        "The plant was designed to remove 12.5 t of phosphorus a year. Lake concentrations fell"
        " to about 60 micrograms per litre by 2024."
    ]

    assert checks.stitched(
        "The plant reduced phosphorus levels by 12.5 t/yr, which is equivalent to approximately"
        " 60 micrograms per litre.",
        excerpt,
    )
    # A word that sets figures side by side does not excuse one that makes them the same.
    assert checks.stitched(
        "It removed 12.5 t a year, equal to 60 micrograms per litre over the lake.", excerpt
    )
    for said in [
        "The plant was designed to remove 12.5 t of phosphorus a year.",
        "Lake concentrations fell to about 60 micrograms per litre by 2024.",
        "The plant removed 12.5 t a year, while the lake fell to 60 micrograms per litre.",
    ]:
        assert not checks.stitched(said, excerpt), said
        assert not checks.unstated_cause(said, excerpt), said


def test_a_source_described_as_saying_what_it_is_not_is_caught():
    design = ["Kestrel Works - Design Basis Note examples/kestrel_works_design_basis.pdf"]
    incident = ["IR-2024-031 examples/incident_report_IR-2024-031.txt"]
    said = "The incident report stated the plant was built to cut phosphorus."

    assert checks.misdescribed_source(said, design)
    assert not checks.misdescribed_source(said, incident)
    assert checks.misdescribed_source("RFC 2592 proposes async fn.", ["Async 2394-async_await.md"])
    assert not checks.misdescribed_source("RFC 2394 proposes async fn.", ["2394-async_await.md"])


def test_a_caught_sentence_goes_to_the_rewrite_with_its_problem_and_is_dropped_if_it_fails_again():
    sentence = CitedSentence(
        text="The overrun led to thousands of new jobs in the valley.", excerpts=[1]
    )
    asked = []

    def rewrite(failed):
        asked.extend(failed)
        return [failed[0][0]]  # the same sentence again

    def faults(s):
        return checks.unsupported_claim(s.text, [FINAL], "")

    kept, counts = hold_to_evidence([sentence], {1: FINAL}, "", rewrite, faults=faults)

    assert asked and "its excerpts do not say this" in asked[0][1]
    assert kept == [None] and counts.dropped == 1
    assert counts.dropped_for == [asked[0][1]]


def test_a_restatement_its_sentence_does_not_support_gives_way_to_the_sentence_with_a_note(
    tmp_path, sample_store
):
    claim = "The plant was a significant economic success, creating thousands of jobs."
    result, _ = run(tmp_path, sample_store, ScriptedResearcher(false_figure=claim))

    assert "thousands of jobs" not in result.report
    notes = result.report.split("## Notes")[1].split("## Sources")[0]
    assert "given in their document's own words" in notes


def test_figures_compared_the_wrong_way_round_are_caught():
    wrong = "The final cost of EUR 29.3 million was within the approved budget of €24.6 million."

    assert "compare" in checks.wrong_comparison(wrong)
    assert not checks.wrong_comparison(wrong.replace("within", "over"))
    assert not checks.wrong_comparison("It cost EUR 20 million, under the €24.6 million budget.")


def test_a_sentence_repeating_an_earlier_one_anywhere_in_the_report_is_left_out_and_noted():
    from types import SimpleNamespace

    from deepsift.report.compose import _remarks, _unrepeated

    def said(text):
        return CitedSentence(text=text, excerpts=[1])

    finding = said("The final out-turn cost of Kestrel Works was EUR 29.3 million.")
    again = said("The final out-turn cost of Kestrel Works was EUR 29.3 million in the end.")
    other = said("The Board had approved a capital budget of EUR 24.6 million in 2021.")
    writer = SimpleNamespace(left_out=[])

    findings, sections, conclusion = _unrepeated(
        [finding], [("Cost", [other, again]), ("Again", [again])], [again, None], writer
    )

    # A finding or a conclusion sentence left out keeps its place (they follow the parts).
    assert findings == [finding] and sections == [("Cost", [other])]
    assert conclusion == [None, None]
    assert _remarks(writer.left_out) == [
        "3 sentence(s) left out: it says again what another sentence of the report says."
    ]
