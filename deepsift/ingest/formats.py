"""Readers for the formats unstructured cannot read offline or without extra packages:
reStructuredText (it needs pandoc), PowerPoint, Excel and e-mail. Each gives a title and blocks
whose headings are the document's own: an .rst section title, a slide's title, a sheet's name."""

import re
from email import policy
from email.parser import BytesParser
from pathlib import Path

from deepsift.ingest.document import Block, LoadedDocument, LoadError, titled

# A section adornment: one punctuation character repeated (RST allows any of these).
_ADORNMENT = re.compile(r"""^([!-/:-@\[-`{-~])\1+\s*$""")
# Explicit markup (comments, directives, link targets, substitutions): not prose.
_MARKUP_LINE = re.compile(r"^\s*\.\.(\s|$)")
# :role:`text` and ``literal`` read as their text.
_ROLE = re.compile(r":[\w:+-]+:`([^`<]*?)\s*(?:<[^`>]*>)?`")
_LITERAL = re.compile(r"``(.+?)``")


def load_rst(path: Path, text: str) -> LoadedDocument:
    """Headings from their underlines (and overlines); a style's depth is the order in which
    the document first uses it, as reStructuredText itself decides."""
    lines = text.replace("\r\n", "\n").split("\n")
    styles: list[tuple[str, bool]] = []
    blocks: list[Block] = []
    paragraph: list[str] = []

    def heading(title: str, style: tuple[str, bool]) -> None:
        end_paragraph()
        if style not in styles:
            styles.append(style)
        blocks.append(Block(_plain(title.strip()), styles.index(style)))

    def end_paragraph() -> None:
        prose = [line.strip() for line in paragraph if not _MARKUP_LINE.match(line)]
        if any(prose):
            blocks.append(Block(_plain(" ".join(filter(None, prose)))))
        paragraph.clear()

    i = 0
    while i < len(lines):
        line, after = lines[i], lines[i + 1] if i + 1 < len(lines) else ""
        below = lines[i + 2] if i + 2 < len(lines) else ""
        if (
            _ADORNMENT.match(line)
            and after.strip()
            and below.rstrip() == line.rstrip()
            and not paragraph
        ):
            heading(after, (line.strip()[0], True))
            i += 3
        elif (
            line.strip()
            and not line[0].isspace()
            and not paragraph
            and _ADORNMENT.match(after)
            and len(after.rstrip()) >= len(line.rstrip())
        ):
            heading(line, (after.strip()[0], False))
            i += 2
        elif line.strip():
            paragraph.append(line)
            i += 1
        else:
            end_paragraph()
            i += 1
    end_paragraph()
    return titled(path, blocks)


def _plain(text: str) -> str:
    return _LITERAL.sub(r"\1", _ROLE.sub(r"\1", text))


def load_pptx(path: Path) -> tuple[LoadedDocument, dict[str, str]]:
    """A slide's title heads its text, its tables (a row a line) and its speaker notes."""
    from pptx import Presentation
    from pptx.exc import PackageNotFoundError

    try:
        presentation = Presentation(str(path))
        slides = presentation.slides
    except (PackageNotFoundError, KeyError, ValueError, OSError) as e:
        raise LoadError(f"cannot read PowerPoint file ({type(e).__name__}: {e})") from None
    blocks = []
    for number, slide in enumerate(slides, 1):
        title = slide.shapes.title
        title_text = title.text_frame.text.strip() if title is not None else ""
        blocks.append(Block(" ".join(title_text.split()) or f"Slide {number}", 0))
        for shape in _shapes(slide.shapes):
            if shape == title:
                continue
            blocks += [Block(text) for text in _shape_texts(shape)]
        if slide.has_notes_slide:
            notes = slide.notes_slide.notes_text_frame
            if notes is not None and notes.text.strip():
                blocks.append(Block(notes.text.strip()))
    return titled(path, blocks), _office_fields(presentation.core_properties)


def _shapes(shapes):  # noqa: ANN001, ANN202 - python-pptx's shape collections are untyped
    for shape in shapes:
        if shape.shape_type is not None and hasattr(shape, "shapes"):  # a group
            yield from _shapes(shape.shapes)
        else:
            yield shape


def _shape_texts(shape) -> list[str]:  # noqa: ANN001
    if getattr(shape, "has_table", False) and shape.has_table:
        rows = (" | ".join(cell.text.strip() for cell in row.cells) for row in shape.table.rows)
        return [row for row in rows if row.strip(" |")]
    if shape.has_text_frame:
        lines = [p.text.strip() for p in shape.text_frame.paragraphs]
        return ["\n".join(line for line in lines if line)] if any(lines) else []
    return []


def load_xlsx(path: Path) -> tuple[LoadedDocument, dict[str, str]]:
    """A sheet's name heads its rows; a row reads as 'column: value' pairs when the sheet's first
    row names its columns, so a chunk of rows still says what each value is."""
    import zipfile

    import openpyxl

    try:
        book = openpyxl.load_workbook(path, read_only=True, data_only=True)
    except (zipfile.BadZipFile, KeyError, ValueError, OSError) as e:
        raise LoadError(f"cannot read Excel file ({type(e).__name__}: {e})") from None
    blocks = []
    fields = _office_fields(book.properties)
    try:
        for sheet in book.worksheets:
            rows = [
                [_cell(value) for value in row]
                for row in sheet.iter_rows(values_only=True)
                if any(_cell(value) for value in row)
            ]
            if not rows:
                continue
            blocks.append(Block(sheet.title, 0))
            names = rows[0] if not any(_is_number(value) for value in rows[0]) else None
            blocks += [Block(_row_text(row, names)) for row in (rows[1:] if names else rows)]
    finally:
        book.close()
    return LoadedDocument(title=path.stem, blocks=blocks), fields


def core_properties(path: Path) -> dict[str, str]:
    """A Word file's core properties as header fields (unstructured reads its text)."""
    import zipfile

    import docx

    try:
        return _office_fields(docx.Document(str(path)).core_properties)
    except (zipfile.BadZipFile, KeyError, ValueError, OSError):
        return {}


# The creation time in python-docx's and python-pptx's own templates: a file made from one
# that never set its own has no date of its own.
_TEMPLATE_DATES = ("2013-12-23", "2013-01-27")


def _office_fields(properties) -> dict[str, str]:  # noqa: ANN001 - three libraries' classes
    """Title, author, date, status, version and subject of an Office file's core properties."""
    fields = {}
    for key, name in (
        ("title", "title"),
        ("author", "author"),
        ("author", "creator"),
        ("status", "content_status"),
        ("version", "version"),
        ("subject", "subject"),
    ):
        value = getattr(properties, name, None)
        if isinstance(value, str) and value.strip():
            fields.setdefault(key, value.strip())
    created = getattr(properties, "created", None)
    if created is not None and str(created)[:10] not in _TEMPLATE_DATES:
        fields["created"] = str(created)[:10]
    return fields


def _row_text(row: list[str], names: list[str] | None) -> str:
    if names is None:
        return " | ".join(value for value in row if value)
    named = [
        names[n] if n < len(names) and names[n] else f"column {n + 1}" for n in range(len(row))
    ]
    return "; ".join(f"{name}: {value}" for name, value in zip(named, row, strict=True) if value)


def _cell(value: object) -> str:
    return "" if value is None else " ".join(str(value).split())


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


_HEADERS = ("From", "To", "Cc", "Date", "Subject")


def load_eml(path: Path, data: bytes) -> tuple[LoadedDocument, dict[str, str]]:
    """Titled by its subject; the sender, recipients and date make the first block (who said
    what, and when, is what mail is searched for), then the body's paragraphs."""
    message = BytesParser(policy=policy.default).parsebytes(data)
    if not any(message[name] for name in _HEADERS):
        raise LoadError("not an e-mail message (no From, To, Date or Subject header)")
    header = "\n".join(f"{name}: {message[name]}" for name in _HEADERS if message[name])
    body = message.get_body(preferencelist=("plain", "html"))
    text = ""
    if body is not None:
        try:
            text = body.get_content()
        except (LookupError, ValueError) as e:  # an unknown charset or a broken encoding
            raise LoadError(f"cannot decode the message body ({e})") from None
        if body.get_content_type() == "text/html":
            text = _html_text(text)
    attached = [part.get_filename() for part in message.iter_attachments()]
    paragraphs = [p.strip() for p in text.replace("\r\n", "\n").split("\n\n") if p.strip()]
    blocks = [Block(header), *(Block(p) for p in paragraphs)]
    if any(attached):
        blocks.append(Block("Attachments: " + ", ".join(filter(None, attached))))
    fields = {name: str(message[name]) for name in ("From", "Date", "Subject") if message[name]}
    return LoadedDocument(title=str(message["subject"] or path.stem), blocks=blocks), fields


def _html_text(html: str) -> str:
    import lxml.html

    if not html.strip():
        return ""
    root = lxml.html.fromstring(html)
    for element in root.iter("script", "style"):
        element.drop_tree()
    for element in root.iter("p", "div", "br", "li", "tr", "h1", "h2", "h3"):
        element.tail = "\n\n" + (element.tail or "")
    return root.text_content()
