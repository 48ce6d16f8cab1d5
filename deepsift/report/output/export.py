"""A report written to a file as Markdown, HTML, PDF or DOCX, chosen by its extension.

All formats come from one parse of the Markdown (markdown-it-py, raw HTML off, so a document's
text cannot inject markup). HTML is one self-contained page whose [n] link to its Sources; PDF
(fpdf2) is drawn from that page; DOCX (python-docx) is built from the parse. A table the model
or a document broke is left as text by the parser, so no exporter ever sees a malformed one.
"""

import errno
import html
import importlib.util
import os
import re
import secrets
import stat
import unicodedata
from collections.abc import Sequence
from functools import cache
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
    """Fail before a run, not after it: the report's folder must exist, the path must not be
    a folder, and the OS must let a file be made beside it (as write_report makes one) and the
    file itself be written (a read-only folder or file, /proc, a full disk, a name too long)."""
    if path.is_dir():
        raise UserError(f"-o {path} is a folder: give a file name, e.g. {path / 'report.md'}")
    if not path.parent.is_dir():
        raise UserError(f"-o {path}: folder {path.parent} does not exist; create it first")
    probe = path.with_name(f".{path.name}.{secrets.token_hex(4)}")
    try:
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        probe.unlink()
        if path.exists() and not os.access(path, os.W_OK):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))
    except OSError as e:
        raise UserError(
            f"-o {path}: cannot write there ({e.strerror or e}); choose another file"
        ) from None


def write_report(
    report: str, path: Path, fmt: str | None = None, title: str = "", fonts: Sequence[Path] = ()
) -> None:
    """Write `report` (Markdown) to `path` in `fmt` (default: by extension), all or nothing."""
    data = report_bytes(report, report_format(path, fmt), title, fonts)
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(4)}")
    # Made as any new file is (0666 less the umask; mkstemp's 0600 would hide a report from
    # the colleagues it is written for), and an overwrite keeps the mode the file had.
    handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        if path.exists():
            os.chmod(temporary, stat.S_IMODE(path.stat().st_mode))
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def report_bytes(report: str, fmt: str, title: str = "", fonts: Sequence[Path] = ()) -> bytes:
    """`report` (Markdown) as a file of format `fmt`, one of FORMATS; `fonts`: TrueType or
    OpenType files the PDF may draw characters from (setting pdf_fonts)."""
    if fmt == "md":
        return report.encode()
    if fmt == "html":
        return to_html(report, title).encode()
    if fmt == "pdf":
        return to_pdf(report, fonts)
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


def to_pdf(report: str, fonts: Sequence[Path] = ()) -> bytes:
    """The report as a PDF: DejaVu Sans, then `fonts` and the system's CJK fonts for what it
    lacks. Characters no font here has are drawn as □, and a note at the top says how many and
    where they are kept (never dropped without a word)."""
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_margins(20, 20, 20)
    pdf.add_page()
    family = _unicode_font(pdf)
    page = _parser().render(report)
    if family is None:  # the core fonts hold Latin-1 only
        pdf.set_font("helvetica", size=11)
        pdf.write_html(_latin1(page))
        return bytes(pdf.output())
    missing = _used(report) - _characters(_unicode_font_file())
    fallbacks = []
    for n, path in enumerate([*fonts, *map(Path, FALLBACK_FONTS)]):
        shown = _characters(path)
        if not missing.isdisjoint(shown):  # a font is embedded only for what it adds
            pdf.add_font(f"fallback{n}", fname=str(path))
            fallbacks.append(f"fallback{n}")
            missing -= shown
    if fallbacks:
        pdf.set_fallback_fonts(fallbacks, exact_match=False)
    pdf.set_font(family, size=11)
    if missing := sorted(missing):
        page = page.translate({ord(c): "□" for c in missing})
        sample = " ".join(missing[:8])
        page = (
            f"<p><b>Note:</b> this PDF cannot show {len(missing)} kind(s) of character of the "
            f"report (drawn as □: {html.escape(sample)}): no font here has them. The HTML and "
            "Word downloads keep them; or set DEEPSIFT_PDF_FONTS to a font file that has them "
            "(Noto Sans CJK for Chinese and Japanese).</p>" + page
        )
    pdf.write_html(page)
    return bytes(pdf.output())


# Where Linux distributions put fonts for the scripts DejaVu Sans lacks (Chinese, Japanese,
# Korean): Noto CJK (fonts-noto-cjk), Droid Sans Fallback (fonts-droid-fallback), WenQuanYi.
FALLBACK_FONTS = (
    "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/truetype/droid/DroidSansFallbackFull.ttf",
    "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc",
    "/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc",
)


def _used(report: str) -> set[str]:
    """The characters a report draws (not spaces or controls)."""
    return {c for c in report if not unicodedata.category(c).startswith(("C", "Z"))}


@cache
def _characters(path: Path | None) -> frozenset[str]:
    """The characters a font file has glyphs for; none when it is absent or unreadable."""
    if path is None or not path.is_file():
        return frozenset()
    from fontTools.ttLib import TTFont

    try:
        with TTFont(str(path), fontNumber=0, lazy=True) as font:
            return frozenset(map(chr, font.getBestCmap()))
    except Exception:  # fontTools raises many types for a file that is not a font
        return frozenset()


_FONT_STYLES = {"": "", "B": "-Bold", "I": "-Oblique", "BI": "-BoldOblique"}


def _unicode_font(pdf) -> str | None:
    """DejaVu Sans, from matplotlib's data or the system's fonts, when either is there."""
    folder = _dejavu_folder()
    if folder is None:
        return None
    for style, suffix in _FONT_STYLES.items():
        pdf.add_font("dejavu", style=style, fname=str(folder / f"DejaVuSans{suffix}.ttf"))
    return "dejavu"


def _unicode_font_file() -> Path | None:
    folder = _dejavu_folder()
    return folder / "DejaVuSans.ttf" if folder else None


def _dejavu_folder() -> Path | None:
    folders = [Path("/usr/share/fonts/truetype/dejavu")]
    spec = importlib.util.find_spec("matplotlib")
    if spec and spec.submodule_search_locations:
        folders.insert(0, Path(next(iter(spec.submodule_search_locations)), "mpl-data/fonts/ttf"))
    for folder in folders:
        if all((folder / f"DejaVuSans{suffix}.ttf").is_file() for suffix in _FONT_STYLES.values()):
            return folder
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
