"""Pages and PDFs by URL as documents of a collection (`deepsift ingest URL...`, `--urls FILE`):
fetched now through the web source's guarded fetcher (addresses, size, type and time limits),
a page's main text or a PDF's text chunked as a file's is, the URL its source. A page counts as
changed when its text does, not its markup: a new banner or date stamp re-embeds nothing."""

import tempfile
from pathlib import Path, PurePosixPath
from urllib.parse import unquote, urlsplit

from deepsift.config import Settings
from deepsift.errors import UserError
from deepsift.ingest.chunking import chunk_document
from deepsift.ingest.document import Block, LoadedDocument, LoadError
from deepsift.ingest.loaders import load
from deepsift.ingest.pipeline import FileResult, ParsedFile, document_hash
from deepsift.text.locations import is_url
from deepsift.web.fetch import FetchError, Page, PageFetcher


class WebPages:
    """The URLs of one ingest and how to read them (deepsift.ingest.pipeline.Pages)."""

    def __init__(self, urls: list[str], settings: Settings) -> None:
        self.urls = list(dict.fromkeys(urls))
        self.settings = settings
        self.fetcher = PageFetcher(settings)

    def parsed(self, url: str, stored: dict[str, str]) -> ParsedFile | FileResult:
        try:
            fetched = self.fetcher.fetch_document(url)
        except FetchError as e:
            return FileResult(url, "failed", error=str(e).removeprefix(f"{url}: "))
        if isinstance(fetched, Page):
            doc_hash = document_hash(fetched.text.encode())
        else:
            doc_hash = document_hash(fetched.body)
        if stored.get(url) == doc_hash:
            return FileResult(url, "unchanged")
        if isinstance(fetched, Page):
            blocks = [Block(text) for text in fetched.text.split("\n\n")]
            document, file_type = LoadedDocument(fetched.title or _name(url), blocks), ".html"
            said = {"title": fetched.title, "date": fetched.published}
            document.facts = {key: value for key, value in said.items() if value}
        else:
            try:
                document, file_type = _pdf(url, fetched.body), ".pdf"
            except LoadError as e:
                return FileResult(url, "failed", error=str(e))
        chunks = chunk_document(document, self.settings.chunk_chars, self.settings.chunk_overlap)
        return ParsedFile(url, doc_hash, document.title, chunks, file_type, document.facts)


def _name(url: str) -> str:
    """The last part of the URL's path ("report" for .../report.pdf), else its host."""
    parts = urlsplit(url)
    return PurePosixPath(unquote(parts.path)).stem or parts.hostname or url


def _pdf(url: str, body: bytes) -> LoadedDocument:
    """A PDF's text, read by the PDF loader from a file named after the URL (its title when the
    PDF states none)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"{_name(url).replace('/', '_')[:100] or 'document'}.pdf"
        path.write_bytes(body)
        return load(path)


def read_url_list(path: Path) -> list[str]:
    """The URLs of a --urls file: one a line; blank lines and lines starting with # skipped."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise UserError(f"--urls {path}: cannot read it ({e})") from None
    urls = []
    for number, line in enumerate(lines, 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if not is_url(line):
            raise UserError(f"--urls {path}, line {number}: {line[:80]!r} is not an http(s) URL")
        urls.append(line)
    return urls
