"""The `web` source, built like Open Deep Search's search tool (section 2.1): rephrase the query,
search every phrasing (Tavily or SearXNG), merge the results by URL, drop what the domain and
recency filters refuse, read the top pages in full and keep their passages most like the query."""

import hashlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel

from deepsift.config import Settings
from deepsift.ingest.chunking import chunk_document
from deepsift.ingest.document import Block, LoadedDocument
from deepsift.llm.embedders import Embedder, similarities
from deepsift.llm.structured import ask_structured
from deepsift.prompts import web as prompt
from deepsift.records import Chunk, Usage
from deepsift.text.queries import clean_queries
from deepsift.text.untrusted import one_line
from deepsift.web import WEB
from deepsift.web.fetch import ExcludedPage, FetchError, Page, PageFetcher
from deepsift.web.filters import WebFilter
from deepsift.web.results import SearchError, WebResult


class Rephrasings(BaseModel):
    queries: list[str]


@dataclass
class WebFound:
    chunks: list[Chunk]
    usage: Usage = field(default_factory=Usage)
    notes: list[str] = field(default_factory=list)
    said: str = ""  # the search and what it returned, on one line


class SearchEngine(Protocol):
    def search(self, query: str) -> list[WebResult]: ...


def search_engine(settings: Settings) -> SearchEngine:
    """The configured backend (each imported only when chosen)."""
    if settings.web_backend == "searxng":
        from deepsift.web.searxng import SearxngSearch

        return SearxngSearch(settings)
    from deepsift.web.tavily import TavilySearch

    return TavilySearch(settings)


class WebSource:
    def __init__(self, settings: Settings, embedder: Embedder) -> None:
        self.settings = settings
        self.embedder = embedder
        self.engine = search_engine(settings)
        self.filter = WebFilter.from_settings(settings)
        self.fetcher = PageFetcher(settings)

    def search(self, query: str, llm: BaseChatModel) -> WebFound:
        """Chunks for `query` (page passages first, then snippets), what it cost, and a note
        for each search or page that failed; a failure never raises."""
        phrasings, usage = self.rephrase(query, llm)
        results, notes = self._search_all([query, *phrasings])
        to_read = [r.url for r in results[: self.settings.web_fetch_pages]]
        fetched = self.fetcher.fetch_many(to_read) if to_read else {}
        # A page that ends on an excluded domain, or states a date too old, is dropped with its
        # result, and without a note: the report never names an excluded address.
        refused = {
            url
            for url, outcome in fetched.items()
            if isinstance(outcome, ExcludedPage)
            or (isinstance(outcome, Page) and not self.filter.is_recent(outcome.published))
        }
        results = [r for r in results if r.url not in refused]
        notes += [
            str(outcome)
            for url, outcome in fetched.items()
            if isinstance(outcome, FetchError) and url not in refused
        ]
        pages = {
            url: page
            for url, page in fetched.items()
            if isinstance(page, Page) and url not in refused
        }
        passages = self._best_passages(query, results, pages)
        snippets = [
            _chunk(query, r.url, r.title, r.snippet, r.published, position=-1)
            for r in results
            if r.url not in pages and r.snippet.strip()
        ]
        chunks = passages + snippets
        # On the scale of Milvus' RRF scores (1/(60+rank) per list, two lists), so that web and
        # collection chunks rank together: the best web chunk ties a collection's best hit.
        for rank, chunk in enumerate(chunks, 1):
            chunk.score = 2 / (60 + rank)
        returned = f"{len(results)} results, {len(pages)} pages read" if results else "no results"
        return WebFound(chunks, usage, notes, f"“{one_line(query)}”: {returned}")

    def rephrase(self, query: str, llm: BaseChatModel) -> tuple[list[str], Usage]:
        k = self.settings.web_rephrasings
        if k == 0:
            return [], Usage()
        messages = [
            SystemMessage(prompt.SYSTEM.format(k=k)),
            HumanMessage(prompt.USER.format(query=query)),
        ]
        reply, usage = ask_structured(llm, messages, Rephrasings, most={"queries": k})
        return clean_queries(reply.queries if reply else [], k, [query]), usage

    def _search_all(self, queries: list[str]) -> tuple[list[WebResult], list[str]]:
        """Every phrasing searched at once; results merged by URL, keeping the best score."""

        def one(query: str) -> list[WebResult] | SearchError:
            try:
                return self.engine.search(query)
            except SearchError as e:
                return e

        with ThreadPoolExecutor(max_workers=len(queries)) as pool:
            outcomes = list(pool.map(one, queries))
        merged: dict[str, WebResult] = {}
        for outcome in outcomes:
            for result in outcome if isinstance(outcome, list) else []:
                if not self.filter.allows_url(result.url) or not self.filter.is_recent(
                    result.published
                ):
                    continue
                if result.url not in merged or result.score > merged[result.url].score:
                    merged[result.url] = result
        notes = [str(o) for o in outcomes if isinstance(o, SearchError)]
        ranked = sorted(merged.values(), key=lambda r: -r.score)
        return ranked[: self.settings.web_results], notes

    def _best_passages(
        self, query: str, results: list[WebResult], pages: dict[str, Page]
    ) -> list[Chunk]:
        """Each read page cut into passages; the ones most similar to the query, best first."""
        candidates = []
        for result in results:
            page = pages.get(result.url)
            if page is None:
                continue
            title = page.title or result.title
            blocks = [Block(p) for p in page.text.split("\n\n") if p.strip()]
            document = LoadedDocument(title=title, blocks=blocks)
            for piece in chunk_document(
                document, self.settings.chunk_chars, self.settings.chunk_overlap
            ):
                published = page.published or result.published
                candidates.append(
                    _chunk(query, page.final_url, title, piece.text, published, piece.position)
                )
        if not candidates:
            return []
        similarity = similarities(
            self.embedder, [query], [c.text for c in candidates], documents=True
        )[0]
        kept: list[tuple[float, Chunk]] = []
        per_page: dict[str, int] = {}
        for n in np.argsort(-similarity):
            chunk = candidates[n]
            if per_page.get(chunk.source, 0) < self.settings.web_passages:
                per_page[chunk.source] = per_page.get(chunk.source, 0) + 1
                kept.append((float(similarity[n]), chunk))
        return [chunk for _, chunk in kept]


def _chunk(query: str, url: str, title: str, text: str, published: str, position: int) -> Chunk:
    key = hashlib.sha256(f"{url}#{position}".encode()).hexdigest()[:20]
    return Chunk(
        id=f"web-{key}",
        text=text,
        source=url,
        title=title,
        collection=WEB,
        position=position,
        query=query,
        published=published,
    )
