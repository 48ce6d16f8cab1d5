"""reStructuredText, PowerPoint, Excel and e-mail: each read with its own headings, chunked under
them, and a file that cannot be read named in one line."""

from email.message import EmailMessage
from pathlib import Path

import pytest

from deepsift.ingest.chunking import chunk_document
from deepsift.ingest.document import LoadError
from deepsift.ingest.loaders import load
from deepsift.ingest.pipeline import ingest
from deepsift.llm.embedders import get_embedder
from deepsift.store import Store

PEP = """\
PEP: 9999
Title: Frozen maps
Status: Draft

Abstract
========

This PEP adds a ``frozenmap`` type, as :pep:`416` once proposed.

.. note::

   A note's text is kept.

Specification
=============

Construction
------------

A frozenmap is built from a mapping.

.. _hashing:

Hashing
-------

It hashes like a tuple of its items::

    hash(frozenmap(a=1))

Rejected ideas
==============

A new literal.
"""


def _pptx(path: Path) -> Path:
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    opening = deck.slides.add_slide(deck.slide_layouts[0])
    opening.shapes.title.text = "Quarterly review"
    opening.placeholders[1].text = "Sales and hiring, Q3"
    results = deck.slides.add_slide(deck.slide_layouts[5])  # title only
    results.shapes.title.text = "Results by region"
    table = results.shapes.add_table(3, 2, Inches(1), Inches(2), Inches(6), Inches(2)).table
    for r, row in enumerate([("Region", "Revenue"), ("North", "4.1 M"), ("South", "2.7 M")]):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    results.notes_slide.notes_text_frame.text = "South missed its target by 12%."
    deck.save(path)
    return path


def _xlsx(path: Path) -> Path:
    import openpyxl

    book = openpyxl.Workbook()
    staff = book.active
    staff.title = "Staff"
    staff.append(["Name", "Team", "Started"])
    staff.append(["Ada Byron", "Compilers", 2019])
    staff.append([])
    staff.append(["Alan Kay", "Runtime", 2021])
    budget = book.create_sheet("Budget")
    budget.append([2024, 1200])
    budget.append([2025, 1350])
    book.save(path)
    return path


def _eml(path: Path) -> Path:
    message = EmailMessage()
    message["From"] = "Ada Byron <ada@example.org>"
    message["To"] = "compilers@example.org"
    message["Date"] = "Tue, 03 Nov 2026 10:00:00 +0000"
    message["Subject"] = "Decision: drop the old borrow checker"
    message.set_content("We agreed on Monday.\n\nThe old checker goes in release 1.92.\n")
    message.add_alternative("<p>We agreed on <b>Monday</b>.</p>", subtype="html")
    message.add_attachment(b"1,2\n", maintype="text", subtype="csv", filename="votes.csv")
    path.write_bytes(bytes(message))
    return path


def _headings(document) -> list[tuple[int, str]]:
    return [(b.heading_depth, b.text) for b in document.blocks if b.heading_depth is not None]


def test_rst_headings_come_from_their_underlines_in_the_order_the_file_uses_them(tmp_path):
    path = tmp_path / "pep-9999.rst"
    path.write_text(PEP)

    document = load(path)

    assert document.title == "pep-9999"  # it opens with a header of fields, not a heading
    assert _headings(document) == [
        (0, "Abstract"),
        (0, "Specification"),
        (1, "Construction"),
        (1, "Hashing"),
        (0, "Rejected ideas"),
    ]
    text = "\n".join(b.text for b in document.blocks)
    assert "adds a frozenmap type, as 416 once proposed" in text  # markup read as its text
    assert "A note's text is kept." in text
    assert ".. note" not in text and "_hashing" not in text
    chunks = chunk_document(document, max_chars=2000, overlap=0)
    hashing = next(c for c in chunks if "hashes like a tuple" in c.text)
    assert hashing.text.startswith("pep-9999 > Specification > Hashing\n")


def test_an_rst_file_that_opens_with_a_title_is_titled_by_it(tmp_path):
    path = tmp_path / "guide.rst"
    path.write_text("=========\nThe Guide\n=========\n\nIntro.\n\nUsage\n-----\n\nRun it.\n")

    document = load(path)

    assert document.title == "The Guide"
    assert _headings(document) == [(0, "The Guide"), (1, "Usage")]


def test_slides_head_their_text_tables_and_notes(tmp_path):
    document = load(_pptx(tmp_path / "review.pptx"))

    assert document.title == "Quarterly review"
    assert _headings(document) == [(0, "Quarterly review"), (0, "Results by region")]
    chunks = chunk_document(document, max_chars=2000, overlap=0)
    results = next(c for c in chunks if "North | 4.1 M" in c.text)
    assert results.text.startswith("Quarterly review > Results by region\n")
    assert "South missed its target by 12%." in results.text  # the speaker notes
    assert any("Sales and hiring, Q3" in c.text for c in chunks)


def test_sheets_head_their_rows_which_name_their_columns(tmp_path):
    document = load(_xlsx(tmp_path / "team.xlsx"))

    assert document.title == "team"
    assert _headings(document) == [(0, "Staff"), (0, "Budget")]
    rows = [b.text for b in document.blocks if b.heading_depth is None]
    # The first row names the columns where it holds no number; the empty row is skipped.
    assert rows == [
        "Name: Ada Byron; Team: Compilers; Started: 2019",
        "Name: Alan Kay; Team: Runtime; Started: 2021",
        "2024 | 1200",
        "2025 | 1350",
    ]


def test_mail_is_titled_by_its_subject_and_says_who_wrote_when(tmp_path):
    document = load(_eml(tmp_path / "decision.eml"))

    assert document.title == "Decision: drop the old borrow checker"
    texts = [b.text for b in document.blocks]
    assert texts[0].startswith("From: Ada Byron <ada@example.org>\nTo: compilers@example.org")
    assert "Date: Tue, 03 Nov 2026" in texts[0]
    assert texts[1:] == [
        "We agreed on Monday.",  # the plain part, not the HTML one
        "The old checker goes in release 1.92.",
        "Attachments: votes.csv",
    ]


def test_html_only_mail_is_read_as_text(tmp_path):
    message = EmailMessage()
    message["Subject"] = "Outage"
    message.set_content(
        "<html><body><p>Down at 09:12.</p><p>Up at 09:40.</p></body></html>", subtype="html"
    )
    path = tmp_path / "outage.eml"
    path.write_bytes(bytes(message))

    texts = [b.text for b in load(path).blocks]

    assert texts[1:] == ["Down at 09:12.", "Up at 09:40."]


@pytest.mark.parametrize(
    "name, content, says",
    [
        ("deck.pptx", b"PK\x03\x04 not a deck", "cannot read PowerPoint file"),
        ("book.xlsx", b"not a zip at all", "cannot read Excel file"),
        ("note.eml", b"just some words, no headers\n", "not an e-mail message"),
        ("notes.rst", b"\xff\xfe\x00b\x00a\x00d", "binary content in a text file"),
    ],
)
def test_a_file_that_cannot_be_read_is_named_in_one_line(tmp_path, name, content, says):
    path = tmp_path / name
    path.write_bytes(content)

    with pytest.raises(LoadError) as raised:
        load(path)

    assert says in str(raised.value) and "\n" not in str(raised.value)


def test_a_folder_of_these_formats_is_ingested_and_a_broken_one_reported(tmp_path, settings):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "pep-9999.rst").write_text(PEP)
    _pptx(folder / "review.pptx")
    _xlsx(folder / "team.xlsx")
    _eml(folder / "decision.eml")
    (folder / "broken.xlsx").write_bytes(b"not a zip at all")
    store = Store(settings)
    try:
        report = ingest([folder], "docs", store, get_embedder(settings), settings)

        failed = [f for f in report.files if f.status == "failed"]
        assert [Path(f.source).name for f in failed] == ["broken.xlsx"]
        assert "cannot read Excel file" in failed[0].error
        stored = {Path(f.source).suffix for f in report.files if f.status == "added"}
        assert stored == {".rst", ".pptx", ".xlsx", ".eml"}
        query = "Which team is Ada Byron on?"
        vector = get_embedder(settings).embed_queries([query])[0]
        hits = store.search("docs", query, vector, 3)
        assert Path(hits[0].source).name == "team.xlsx"
    finally:
        store.close()
