"""A report written to a file as Markdown, HTML, PDF or DOCX, chosen by its extension.

All formats come from one parse of the Markdown (markdown-it-py, raw HTML off, so a document's
text cannot inject markup). HTML is one self-contained page whose [n] link to its Sources; PDF
(fpdf2) is drawn from that page; DOCX (python-docx) is built from the parse. A table the model
or a document broke is left as text by the parser, so no exporter ever sees a malformed one.
"""

import html
import importlib.util
import os
import re
import tempfile
import unicodedata
from pathlib import Path

from markdown_it import MarkdownIt
from markdown_it.token import Token

from deepsift.errors import UserError
from deepsift.text.marks import MARK

FORMATS = ("md", "html", "pdf", "docx")
_STYLE = """body{font-family:Georgia,serif;max-width:46em;margin:2em auto;padding:0 1em;\
line-height:1.5;color:#222}h1,h2,h3{font-family:Helvetica,Arial,sans-serif}a.cite{\
text-decoration:none}table{border-collapse:collapse}td,th{border:1px solid #999;padding:.2em .5em}\
:target{background:#fff3b0}"""


def report_format(path: Path, given: str | None = None) -> str:
    """The format to write `path` in: `given`, else its extension."""
    name = (given or path.suffix.lstrip(".")).lower()
    name = {"markdown": "md", "htm": "html"}.get(name, name)
    if name not in FORMATS:
        raise UserError(
            f"cannot write a report as {name or 'a file without extension'!r} ({path}): "
            f"use -o with .md, .html, .pdf or .docx, or --format {{{','.join(FORMATS)}}}"
        )
    return name


def check_output(path: Path) -> None:
    """Fail before a run, not after it: the report's folder must exist, and the path must not be
    a folder."""
    if path.is_dir():
        raise UserError(f"-o {path} is a folder: give a file name, e.g. {path / 'report.md'}")
    if not path.parent.is_dir():
        raise UserError(f"-o {path}: folder {path.parent} does not exist; create it first")


def write_report(report: str, path: Path, fmt: str | None = None, title: str = "") -> None:
    """Write `report` (Markdown) to `path` in `fmt` (default: by extension), all or nothing."""
    data = report_bytes(report, report_format(path, fmt), title)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def report_bytes(report: str, fmt: str, title: str = "") -> bytes:
    """`report` (Markdown) as a file of format `fmt`, one of FORMATS."""
    if fmt == "md":
        return report.encode()
    if fmt == "html":
        return to_html(report, title).encode()
    if fmt == "pdf":
        return to_pdf(report)
    if fmt == "docx":
        return to_docx(report)
    raise ValueError(f"no report format {fmt!r}")


def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": False}).enable("table")


def body_html(report: str) -> str:
    """The report as HTML: every [n] a link to its entry in Sources, each entry an anchor."""
    rendered = _parser().render(report)
    sources = rendered.rfind("<h2>")
    head, tail = rendered[:sources], rendered[sources:]
    head = MARK.sub(lambda m: _linked(m, '<a class="cite" href="#source-{n}">[{n}]</a>'), head)
    tail = re.sub(rf"<p>{MARK.pattern}", lambda m: _linked(m, '<p id="source-{n}">[{n}]'), tail)
    return head + tail


def _linked(mark: re.Match, template: str) -> str:
    """A mark of one number as `template`; one of several (never in a cited report) as it is."""
    number = mark.group(1)
    return template.format(n=number) if number.isdigit() else mark.group(0)


def to_html(report: str, title: str = "") -> str:
    title = title or next(iter(re.findall(r"^# (.*)$", report, re.MULTILINE)), "Report")
    return (
        '<!DOCTYPE html>\n<html><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head>\n"
        f"<body>\n{body_html(report)}</body></html>\n"
    )


def to_pdf(report: str) -> bytes:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_margins(20, 20, 20)
    pdf.add_page()
    family = _unicode_font(pdf)
    page = _parser().render(report)
    if family is None:  # the core fonts hold Latin-1 only
        pdf.set_font("helvetica", size=11)
        page = _latin1(page)
    else:
        pdf.set_font(family, size=11)
    pdf.write_html(page)
    return bytes(pdf.output())


_FONT_STYLES = {"": "", "B": "-Bold", "I": "-Oblique", "BI": "-BoldOblique"}


def _unicode_font(pdf) -> str | None:
    """DejaVu Sans, from matplotlib's data or the system's fonts, when either is there."""
    folders = [Path("/usr/share/fonts/truetype/dejavu")]
    spec = importlib.util.find_spec("matplotlib")
    if spec and spec.submodule_search_locations:
        folders.insert(0, Path(next(iter(spec.submodule_search_locations)), "mpl-data/fonts/ttf"))
    for folder in folders:
        files = {
            style: folder / f"DejaVuSans{suffix}.ttf" for style, suffix in _FONT_STYLES.items()
        }
        if all(file.is_file() for file in files.values()):
            for style, file in files.items():
                pdf.add_font("dejavu", style=style, fname=str(file))
            return "dejavu"
    return None


_LATIN1 = str.maketrans({"€": "EUR ", "—": "-", "–": "-", "“": '"', "”": '"', "‘": "'", "’": "'"})


def _latin1(text: str) -> str:
    text = unicodedata.normalize("NFKC", text.translate(_LATIN1))
    return text.encode("latin-1", "replace").decode("latin-1")


def to_docx(report: str) -> bytes:
    """A Word document with the report's headings, paragraphs, lists and tables."""
    import io

    from docx import Document

    document = Document()
    tokens = _parser().parse(report)
    lists: list[str] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token.type == "heading_open":
            level = int(token.tag[1])
            document.add_heading(tokens[i + 1].content, level=0 if level == 1 else level - 1)
            i += 3
            continue
        if token.type in ("bullet_list_open", "ordered_list_open"):
            lists.append("List Bullet" if token.type == "bullet_list_open" else "List Number")
        elif token.type in ("bullet_list_close", "ordered_list_close"):
            lists.pop()
        elif token.type == "inline" and tokens[i - 1].type == "paragraph_open":
            style = lists[-1] if lists else None
            _add_runs(document.add_paragraph(style=style), token)
        elif token.type == "table_open":
            i = _add_table(document, tokens, i)
            continue
        elif token.type in ("fence", "code_block"):
            document.add_paragraph(token.content.rstrip("\n"))
        i += 1
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def _add_runs(paragraph, inline: Token) -> None:
    bold = italic = False
    for child in inline.children or []:
        if child.type in ("strong_open", "strong_close"):
            bold = child.type == "strong_open"
        elif child.type in ("em_open", "em_close"):
            italic = child.type == "em_open"
        elif child.type in ("text", "code_inline"):
            run = paragraph.add_run(child.content)
            run.bold, run.italic = bold, italic
        elif child.type in ("softbreak", "hardbreak"):
            paragraph.add_run(" ")


def _add_table(document, tokens: list[Token], start: int) -> int:
    """The table that opens at tokens[start]; returns the index after it closes."""
    rows: list[list[Token]] = []
    i = start
    while tokens[i].type != "table_close":
        if tokens[i].type == "tr_open":
            rows.append([])
        elif tokens[i].type == "inline":
            rows[-1].append(tokens[i])
        i += 1
    width = max(len(row) for row in rows)
    table = document.add_table(rows=len(rows), cols=width)
    table.style = "Table Grid"
    for r, row in enumerate(rows):
        for c, cell in enumerate(row):
            _add_runs(table.cell(r, c).paragraphs[0], cell)
    return i + 1
