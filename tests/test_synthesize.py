from deepsift.llm.structured import parse_json
from deepsift.report.writing.cited_text import CitedSentence, CitedText, ReportFrame, clean


def test_cited_sentences_render_with_marks_before_the_full_stop_and_no_repeats():
    text = CitedText(
        sentences=[
            CitedSentence(text="The plant cost €29.3m.", excerpts=[2, 2, 5]),
            CitedSentence(text="The plant cost €29.3m.", excerpts=[2]),
            CitedSentence(text="Nothing says when it opened", excerpts=[]),
            CitedSentence(text="  ", excerpts=[1]),
        ]
    )

    assert text.render() == "The plant cost €29.3m [2][5]. Nothing says when it opened"


def test_a_sentence_opening_like_an_earlier_one_is_a_loop_and_left_out():
    text = CitedText(
        sentences=[
            CitedSentence(text="The project was also built to address the peat.", excerpts=[1]),
            CitedSentence(text="The project was also built to address delays.", excerpts=[1]),
            CitedSentence(text="The project cost EUR 29.3 million in the end.", excerpts=[2]),
            CitedSentence(text="It rose.", excerpts=[3]),
        ]
    )

    assert text.render() == (
        "The project was also built to address the peat [1]. "
        "The project cost EUR 29.3 million in the end [2]. It rose [3]."
    )


def test_a_sentence_that_restates_an_earlier_one_in_fewer_words_is_left_out():
    first = "The Kestrel Works plant was built because the lake has blooms every summer."
    text = CitedText(
        sentences=[
            CitedSentence(text=first, excerpts=[2]),
            CitedSentence(text="It cost EUR 29.3 million against EUR 24.6 million.", excerpts=[1]),
            CitedSentence(text="The plant was built because the lake has blooms.", excerpts=[2]),
            CitedSentence(text="It cost EUR 29.3 million, not EUR 24.6 million.", excerpts=[1]),
        ]
    )

    assert text.render() == (
        "The Kestrel Works plant was built because the lake has blooms every summer [2]. "
        "It cost EUR 29.3 million against EUR 24.6 million [1]. "
        "It cost EUR 29.3 million, not EUR 24.6 million [1]."
    )


def test_numbers_outside_what_the_writer_was_shown_are_dropped():
    text = CitedText(sentences=[CitedSentence(text="Cost rose.", excerpts=[3, 8])])

    assert text.render(citable={3, 4}) == "Cost rose [3]."


def test_marks_the_model_wrote_into_its_text_are_replaced_by_the_checked_ones():
    text = CitedText(
        sentences=[
            CitedSentence(text="The plant cost more [4].", excerpts=[4]),
            CitedSentence(text="It opened in 2024 [2, 9]", excerpts=[2]),
        ]
    )

    assert text.render({2, 4}) == "The plant cost more [4]. It opened in 2024 [2]"


def test_a_reply_cut_off_mid_sentence_keeps_the_sentences_before_the_cut():
    cut = '{"title": "T", "conclusion": [{"text": "A.", "excerpts": [1]}, {"text": "B is cu'

    frame = parse_json(cut, ReportFrame)

    assert frame.title == "T" and [s.text for s in frame.conclusion] == ["A."]
    assert frame.headings == []


def test_a_closing_clause_naming_the_source_is_left_to_the_citation():
    text = CitedText(
        sentences=[
            CitedSentence(
                text="The plant cost EUR 22.8 million, as stated in the document "
                "examples/corpus/science/kestrel_works_design_basis.pdf.",
                excerpts=[3],
            ),
            CitedSentence(text="Phosphorus fell as reported in the 2025 report!", excerpts=[1]),
            CitedSentence(
                text="It was built to cut phosphorus, as stated in the document "
                "examples/design.pdf, which recommends reducing the external load first.",
                excerpts=[4],
            ),
            CitedSentence(text="The plant, as stated in the minutes, cost more.", excerpts=[2]),
        ]
    )

    assert text.render() == (
        "The plant cost EUR 22.8 million [3]. Phosphorus fell [1]! "
        "It was built to cut phosphorus [4]. "
        "The plant, as stated in the minutes, cost more [2]."
    )


def test_a_text_of_several_sentences_is_kept_as_one_sentence_each_citing_its_excerpts():
    packed = "Dr. Okonjo asked about the risk. J. Smith replied. The plant opened in 2024."

    kept = clean([CitedSentence(text=packed, excerpts=[2, 4])])

    assert [s.text for s in kept] == [
        "Dr. Okonjo asked about the risk.",
        "J. Smith replied.",
        "The plant opened in 2024.",
    ]
    assert all(s.excerpts == [2, 4] for s in kept)
