"""Read a file into a title and a list of blocks (headings and paragraphs)."""

import logging
import os
import re
from functools import cache
from pathlib import Path

from deepsift.ingest import formats
from deepsift.ingest.document import Block, LoadedDocument, LoadError, titled
from deepsift.ingest.facts import (
    declared_title,
    document_facts,
    front_matter_lines,
    header_fields,
    without_front_matter,
)

os.environ.setdefault("DO_NOT_TRACK", "1")  # unstructured reports usage on import otherwise
os.environ.setdefault("UNSTRUCTURED_DISABLE_NOTICE", "1")

# pypdf logs what it finds wrong in a damaged PDF; LoadError already says it, in one line.
logging.getLogger("pypdf").setLevel(logging.ERROR)

SUPPORTED = {
    *(".md", ".markdown", ".txt", ".rst", ".html", ".htm", ".json", ".csv"),
    *(".pdf", ".docx", ".pptx", ".xlsx", ".eml"),
}

_TEXT = {".md", ".markdown", ".txt", ".rst", ".html", ".htm", ".json", ".csv"}
_HEADED = {".md", ".markdown", ".txt", ".rst"}  # may open with front matter or a field list


def load(path: Path) -> LoadedDocument:
    suffix = path.suffix.lower()
    if suffix not in SUPPORTED:
        raise LoadError(f"unsupported file type {suffix or '(none)'}; supported: {_supported()}")
    try:
        data = path.read_bytes()
    except OSError as e:
        raise LoadError(f"cannot read: {e.strerror or e}") from None
    if not data.strip():
        raise LoadError("empty file")
    text = _decode_text(data) if suffix in _TEXT else ""
    # The header first: one refused (deepsift.ingest.facts bounds it) fails the file before
    # its body is parsed.
    fields = header_fields(text) if suffix in _HEADED else {}
    # Front matter that parsed is its facts and header lines, not its body; fenced text that is
    # not YAML or TOML fields (two rules around prose) stays its text.
    body = without_front_matter(text) if suffix in _HEADED and fields else text
    if suffix == ".pdf":
        document, fields = _load_pdf(path)
    elif suffix == ".rst":
        document = formats.load_rst(path, body)
    elif suffix == ".pptx":
        document, fields = formats.load_pptx(path)
    elif suffix == ".xlsx":
        document, fields = formats.load_xlsx(path)
    elif suffix == ".eml":
        document, fields = formats.load_eml(path, data)
    elif suffix in {".txt", ".json", ".csv"}:
        document = _load_plain(path, body)
    else:
        document, properties = _load_unstructured(path, body if body != text else None)
        fields = fields or properties
    if not any(block.text.strip() for block in document.blocks):
        raise LoadError("no text found in it")
    if body != text:  # its front matter was cut: it opened with a header
        document.header = front_matter_lines(fields)
        # A body that opens with a section ("## Abstract", or "# Abstract" under `title: Gas
        # pricing`) is known by its file name, not by that section.
        opening, declared = document.blocks[0], declared_title(fields)
        other = declared and opening.text.casefold() != declared.casefold()
        if document.title == opening.text and (opening.heading_depth or other):
            document.title = path.stem
    document.facts = document_facts(fields, document, path, text)
    return document


def _supported() -> str:
    return " ".join(sorted(SUPPORTED))


def _decode_text(data: bytes) -> str:
    if b"\x00" in data[:8192]:
        raise LoadError("binary content in a text file")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise LoadError("not UTF-8 text (binary, or another encoding)") from None


def _load_plain(path: Path, text: str) -> LoadedDocument:
    paragraphs = [p.strip() for p in text.replace("\r\n", "\n").split("\n\n") if p.strip()]
    return LoadedDocument(title=path.stem, blocks=[Block(p) for p in paragraphs])


def _load_pdf(path: Path) -> tuple[LoadedDocument, dict[str, str]]:
    """Its text, and its info dictionary's title, author, subject and dates as its fields."""
    import pypdf

    try:
        reader = pypdf.PdfReader(path)
        pages = [page.extract_text() or "" for page in reader.pages]
        info = dict(reader.metadata or {})
    except Exception as e:  # pypdf raises many types for one cause: a damaged file
        raise LoadError(f"cannot read PDF ({type(e).__name__}: {e})") from None
    fields = {str(k).lstrip("/"): str(v) for k, v in info.items() if isinstance(v, str) and v}
    if created := re.match(r"D:(\d{4})(\d{2})?(\d{2})?", fields.get("CreationDate", "")):
        fields["CreationDate"] = "-".join(filter(None, created.groups()))
    blocks = [Block(p.strip()) for page in pages for p in page.split("\n\n") if p.strip()]
    return LoadedDocument(title=fields.get("Title") or path.stem, blocks=blocks), fields


@cache
def _offline_spacy() -> None:
    """unstructured downloads a spaCy model on first use; offline, use a blank English pipeline."""
    import spacy
    import unstructured.nlp.tokenize as tokenize

    def load_or_blank() -> spacy.language.Language:
        try:
            return spacy.load("en_core_web_sm", exclude=["ner", "lemmatizer", "attribute_ruler"])
        except OSError:
            nlp = spacy.blank("en")
            nlp.add_pipe("sentencizer")
            return nlp

    tokenize._load_spacy_model = load_or_blank


def _load_unstructured(
    path: Path, markdown: str | None = None
) -> tuple[LoadedDocument, dict[str, str]]:
    """`markdown`: the file's text to read instead of the file (its front matter cut off)."""
    _offline_spacy()
    from unstructured.partition.auto import partition
    from unstructured.partition.md import partition_md

    try:
        if markdown is not None:
            elements = partition_md(text=markdown)
        else:
            elements = partition(filename=str(path))
    except Exception as e:  # parsers raise many types for one cause: a damaged file
        raise LoadError(f"cannot parse ({type(e).__name__}: {e})") from None
    blocks = []
    for element in elements:
        text = element.text.strip()
        if not text:
            continue
        is_heading = type(element).__name__ == "Title" and _looks_like_heading(text)
        depth = (element.metadata.category_depth or 0) if is_heading else None
        blocks.append(Block(text, depth))
    fields = formats.core_properties(path) if path.suffix.lower() == ".docx" else {}
    return titled(path, blocks), fields


def _looks_like_heading(text: str) -> bool:
    # Offline, unstructured cannot tag verbs, so it calls some short sentences titles.
    return len(text) <= 100 and not text.endswith((".", "!", "?", ":", ";"))
