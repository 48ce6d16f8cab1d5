from deepsift.records import Chunk
from deepsift.report.output.citations import resolve_citations, sources_section


def _chunk(n: int, document: int | None = None) -> Chunk:
    document = document or n
    return Chunk(
        id=f"c{n}",
        text="t",
        source=f"/docs/d{document}.md",
        title=f"Doc {document}",
        collection="x",
    )


def test_citations_are_renumbered_in_order_of_first_use():
    shown = [_chunk(1), _chunk(2), _chunk(3)]

    body, sources = resolve_citations("A [3]. B [1, 3]. C [3][3].", shown)

    assert body == "A [1]. B [2][1]. C [1]."
    assert [(s.n, s.chunk_ids) for s in sources] == [(1, ["c3"]), (2, ["c1"])]


def test_excerpts_of_one_document_share_its_number():
    shown = [_chunk(1, document=7), _chunk(2), _chunk(3, document=7)]

    body, sources = resolve_citations("A [3]. B [2]. C [1][3].", shown)

    assert body == "A [1]. B [2]. C [1]."
    assert [(s.n, s.source, s.chunk_ids) for s in sources] == [
        (1, "/docs/d7.md", ["c3", "c1"]),
        (2, "/docs/d2.md", ["c2"]),
    ]


def test_numbers_that_were_never_shown_are_removed():
    body, sources = resolve_citations("Real [2]. Made up [7]. Zero [0].", [_chunk(1), _chunk(2)])

    assert body == "Real [1]. Made up. Zero."
    assert [s.chunk_ids for s in sources] == [["c2"]]


def test_a_sources_list_written_by_the_model_is_replaced():
    body, _ = resolve_citations("Text [1].\n\n## References\n[1] invented", [_chunk(1)])

    assert body == "Text [1]."


def test_sources_section_lists_every_citation():
    _, sources = resolve_citations("A [2]. B [1].", [_chunk(1), _chunk(2)])

    section = sources_section(sources)

    assert "[1] Doc 2 — `/docs/d2.md`" in section
    assert "[2] Doc 1 — `/docs/d1.md`" in section


def test_marks_that_renumber_to_one_document_are_printed_once():
    shown = [_chunk(1), _chunk(2), _chunk(3, document=1)]  # excerpts 1 and 3: one document

    body, _ = resolve_citations("A [1][2][3].", shown)

    assert body == "A [1][2]."
