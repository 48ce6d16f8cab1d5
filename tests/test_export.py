"""Reports written as Markdown, HTML, PDF and DOCX, read back with each format's own reader."""

import os
import re
import stat
from html.parser import HTMLParser
from pathlib import Path

import docx
import pypdf
import pytest

from deepsift import research
from deepsift.errors import UserError
from deepsift.report.output.export import write_report

from conftest import run_cli

BROKEN = """# Broken tables

## Figures

| year | TP |
|---|---|
| 2024 | 52 |

| a | b
|---|
| 1 | 2 | 3 |
| unclosed

Silt <b>comes</b> from the river [1].

## Sources

[1] Monitoring report — `monitoring.md`
"""


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.headings: list[str] = []
        self.links: list[str] = []
        self.anchors: list[str] = []
        self.text: list[str] = []
        self._in_heading = False

    def handle_starttag(self, tag: str, attrs: list) -> None:
        attrs = dict(attrs)
        self._in_heading = tag in ("h1", "h2")
        if tag == "a" and attrs.get("href", "").startswith("#source-"):
            self.links.append(attrs["href"][len("#source-") :])
        if "id" in attrs and attrs["id"].startswith("source-"):
            self.anchors.append(attrs["id"][len("source-") :])

    def handle_endtag(self, tag: str) -> None:
        self._in_heading = False

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self._in_heading:
            self.headings.append(data)


@pytest.fixture
def report(settings, deps) -> str:
    return research(
        "Why was Kestrel Works built, and what did it cost?", settings, deps=deps
    ).report


def headings_of(report: str) -> list[str]:
    return re.findall(r"^#{1,2} (.*)$", report, re.MULTILINE)


def cited(text: str) -> set[str]:
    return set(re.findall(r"\[(\d+)\]", text))


def test_html_is_one_page_whose_citations_link_to_its_sources(report, tmp_path):
    write_report(report, tmp_path / "r.html")

    page = _Page()
    page.feed((tmp_path / "r.html").read_text(encoding="utf-8"))
    assert page.headings == headings_of(report)
    assert set(page.links) == cited(report.split("## Sources")[0])
    assert set(page.anchors) == set(page.links)  # every link lands on its source
    assert "src=" not in (tmp_path / "r.html").read_text() and "<link" not in page.rawdata


def test_pdf_keeps_headings_citations_and_sources(report, tmp_path):
    write_report(report, tmp_path / "r.pdf")

    text = "\n".join(page.extract_text() for page in pypdf.PdfReader(tmp_path / "r.pdf").pages)
    flat = " ".join(text.split())
    for heading in headings_of(report):
        assert " ".join(heading.split()) in flat
    assert cited(text) == cited(report)
    sources = report.split("## Sources")[1]
    for title in re.findall(r"^\[\d+\] (.*?) —", sources, re.MULTILINE):
        assert " ".join(title.split()) in flat


def test_docx_keeps_headings_lists_citations_and_sources(report, tmp_path):
    write_report(report, tmp_path / "r.docx")

    document = docx.Document(tmp_path / "r.docx")
    styled = [(p.style.name, p.text) for p in document.paragraphs]
    assert [text for style, text in styled if style in ("Title", "Heading 1")] == headings_of(
        report
    )
    assert any(style == "List Bullet" for style, _ in styled)  # the key findings
    assert cited(" ".join(text for _, text in styled)) == cited(report)


@pytest.mark.parametrize("suffix", ["html", "pdf", "docx"])
def test_markdown_with_broken_tables_and_raw_html_exports_without_error(tmp_path, suffix):
    write_report(BROKEN, tmp_path / f"r.{suffix}")

    assert (tmp_path / f"r.{suffix}").stat().st_size > 0
    if suffix == "html":
        page = (tmp_path / "r.html").read_text()
        assert "<b>comes</b>" not in page and "&lt;b&gt;comes" in page  # no markup injected
    if suffix == "docx":
        assert len(docx.Document(tmp_path / "r.docx").tables) == 1


def test_an_unknown_extension_is_refused_with_the_formats_to_use(tmp_path):
    with pytest.raises(UserError, match=r"\.md, \.html, \.pdf or \.docx"):
        write_report(BROKEN, tmp_path / "r.odt")


def test_research_refuses_an_output_folder_that_does_not_exist_before_it_runs(tmp_path):
    result = run_cli("research", "anything", "-o", "missing/dir/r.pdf", data=tmp_path / "data")

    assert result.returncode == 2
    assert "folder missing/dir does not exist" in result.stderr
    assert not (tmp_path / "data" / "checkpoints.sqlite").exists()  # nothing ran


CJK_REPORT = "# 报告\n\n港口的水位在2024年上升了 12 厘米 [1]。\n\n## Sources\n\n[1] 水位 — `a.md`\n"


def _pdf_text(path) -> str:
    return "".join(page.extract_text() for page in pypdf.PdfReader(path).pages)


def test_a_pdf_without_a_font_for_the_report_s_script_says_so_at_its_top(tmp_path, monkeypatch):
    from deepsift.report.output import export

    monkeypatch.setattr(export, "FALLBACK_FONTS", ())  # only DejaVu Sans: no Chinese glyphs
    path = tmp_path / "r.pdf"

    write_report(CJK_REPORT + "\nA grin 😀.\n", path)

    text = _pdf_text(path)
    assert "this PDF cannot show" in text and "□" in text
    assert "DEEPSIFT_PDF_FONTS" in text and "2024" in text and "12" in text


def test_a_pdf_draws_chinese_with_a_cjk_font_of_the_system_or_the_setting(tmp_path):
    from deepsift.report.output.export import FALLBACK_FONTS

    found = [font for font in FALLBACK_FONTS if Path(font).is_file()]
    if not found:
        pytest.skip("no CJK font installed (fonts-droid-fallback or fonts-noto-cjk)")
    path = tmp_path / "r.pdf"

    write_report(CJK_REPORT, path, fonts=[Path(found[0])])

    text = _pdf_text(path)
    assert "港口的水位" in text and "this PDF cannot show" not in text


@pytest.mark.parametrize("fmt", ["md", "pdf"])
def test_a_report_is_written_with_the_umask_and_an_overwrite_keeps_its_mode(tmp_path, fmt):
    path = tmp_path / f"report.{fmt}"
    before = os.umask(0o022)
    try:
        write_report("# Report\n\nShared [1].\n", path)
        written = stat.S_IMODE(path.stat().st_mode)
        path.chmod(0o640)
        write_report("# Report\n\nRewritten [1].\n", path)
        kept = stat.S_IMODE(path.stat().st_mode)
        os.umask(0o077)
        write_report("# Private\n", tmp_path / f"private.{fmt}")
        private = stat.S_IMODE((tmp_path / f"private.{fmt}").stat().st_mode)
    finally:
        os.umask(before)

    assert (written, kept, private) == (0o644, 0o640, 0o600)
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"private.{fmt}", f"report.{fmt}"]
