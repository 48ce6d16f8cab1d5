from deepsift.ingest.chunking import chunk_document
from deepsift.ingest.document import Block, LoadedDocument
from deepsift.ingest.loaders import load


def _document() -> LoadedDocument:
    return LoadedDocument(
        title="Plant Report",
        blocks=[
            Block("Plant Report", 0),
            Block("Intro paragraph about the plant."),
            Block("Costs", 1),
            Block("Budget", 2),
            Block(" ".join(f"Sentence {i} about the budget overrun." for i in range(40))),
            Block("Results", 1),
            Block("Phosphorus fell from 68 to 43 micrograms per litre."),
        ],
    )


def test_chunks_carry_their_heading_path_and_positions():
    chunks = chunk_document(_document(), max_chars=300, overlap=60)

    assert [c.position for c in chunks] == list(range(len(chunks)))
    assert chunks[0].text.startswith("Plant Report\n\nIntro paragraph")
    budget = [c for c in chunks if c.heading == "Plant Report > Costs > Budget"]
    assert len(budget) > 2
    assert all(c.text.startswith("Plant Report > Costs > Budget\n\n") for c in budget)
    assert chunks[-1].heading == "Plant Report > Results"  # a sibling heading replaces "Costs"


def test_long_sections_are_split_with_overlap_and_bounded_size():
    chunks = chunk_document(_document(), max_chars=300, overlap=60)
    budget = [c.text.split("\n\n", 1)[1] for c in chunks if c.heading.endswith("Budget")]

    assert all(len(text) <= 300 + 60 for text in budget)
    for previous, current in zip(budget, budget[1:], strict=False):
        assert previous[-30:] in current  # the next chunk repeats the end of the previous one


def test_sections_are_never_mixed_in_one_chunk():
    chunks = chunk_document(_document(), max_chars=5000, overlap=0)

    assert not any("Intro paragraph" in c.text and "Sentence 0" in c.text for c in chunks)
    assert len(chunks) == 3


def test_a_document_is_titled_by_its_opening_heading_else_by_its_file_name(tmp_path):
    titled = tmp_path / "minutes.md"
    titled.write_text("# Board Minutes, May\n\n## Present\n\nThe chair.\n\n## Votes\n\nCarried.\n")
    headed = tmp_path / "2094-nll.md"  # an RFC: a header of metadata, then its sections
    headed.write_text(
        "- Feature Name: nll\n- Start Date: 2017-08-02\n\n## Summary\n\nLifetimes.\n\n"
        "## Motivation\n\nBorrows.\n"
    )

    assert load(titled).title == "Board Minutes, May"
    document = load(headed)
    assert document.title == "2094-nll"  # not "Summary", which heads a section of every RFC
    first = chunk_document(document, max_chars=500, overlap=0)[0]
    assert first.text.startswith("2094-nll")  # the context line carries the file's name
