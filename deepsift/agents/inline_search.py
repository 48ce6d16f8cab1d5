"""The search of the agents that search as they reason (Search-o1, ReAct): their entry (the
run's sources, and the question's own search so their ranking is never worse than one search),
one query searched in its routed sources with the LLM-free hop, the run's excerpt numbers, and
the excerpts their short report cites."""

from concurrent.futures import ThreadPoolExecutor
from contextvars import copy_context
from typing import Any

from deepsift.deps import Deps
from deepsift.graph.ranking import merge_chunks
from deepsift.graph.sources import WEB, available_sources, resolve_sources
from deepsift.nodes.hop import follow_names
from deepsift.nodes.route import plan_routes
from deepsift.nodes.search import search_source
from deepsift.records import Chunk, Usage
from deepsift.text.marks import cited

REPORT_EXCERPTS = 8  # the excerpts read that the short report is written from, at most


def entry(state: dict[str, Any], deps: Deps) -> dict:
    """The run's sources, checked before any LLM call; and the question's own search in its
    collections, so the run's ranking fuses every later search with it."""
    sources = resolve_sources(deps, state.get("sources_to_search"), state.get("web"))
    chunks = question_search(state["question"], sources, deps)
    return {"sources_to_search": sources, "chunks": chunks}


def search_routed(
    query: str, sources_to_search: list[str] | None, deps: Deps, known: dict[str, Chunk], n: int
) -> tuple[dict[str, Chunk], list[Chunk], Usage, list[str]]:
    """One query of an agent that searches as it reasons (Search-o1, ReAct), in the sources the
    router picks for it, in parallel, and in its collections the pages of the names its best
    hits mention (the LLM-free hop; `known`: the run's chunks so far). Returns every chunk
    found, the n the agent reads (read_first), what routing and the web cost, and the web's
    notes."""
    sources = available_sources(sources_to_search, deps)
    routes, usage = plan_routes([query], sources, deps)
    with ThreadPoolExecutor(max_workers=max(1, len(routes[0].sources))) as pool:
        # In this thread's context: a cancelled run's web rephrasing is not sent.
        searches = [
            pool.submit(copy_context().run, search_source, query, source, deps)
            for source in routes[0].sources
        ]
        found = [search.result() for search in searches]
    chunks: dict[str, Chunk] = {}
    notes: list[str] = []
    for update in found:
        chunks = merge_chunks(chunks, update["chunks"])
        usage = usage + update.get("usage", Usage())
        notes += update.get("notes", [])
    own = sorted(chunks.values(), key=lambda c: -c.score)
    collections = [s for s in routes[0].sources if s != WEB]
    top = [c for c in own if c.collection in collections][: deps.settings.hop_chunks]
    linked = follow_names(query, top, collections, deps, known, asked=True) if top else {}
    return merge_chunks(chunks, linked), read_first(own, linked, n), usage, notes


def read_first(own: list[Chunk], linked: dict[str, Chunk], n: int) -> list[Chunk]:
    """The n excerpts an agent reads from one search: the query's own best hits (`own`, best
    first), and last, at most half of the n, the pages the hop linked that those do not hold."""
    head = own[: n - n // 2]
    taken = {c.id for c in head}
    pages = sorted(
        (c for c in linked.values() if c.link_rank is not None), key=lambda c: c.link_rank
    )
    links = [c for c in pages if c.id not in taken][: n // 2]
    taken |= {c.id for c in links}
    fill = [c for c in own if c.id not in taken][: n - len(head) - len(links)]
    return head + fill + links


def question_search(question: str, sources: list[str], deps: Deps) -> dict[str, Chunk]:
    """The question as asked, searched in the run's collections (not the web), so the ranking
    of an agent that searches as it reasons fuses every later search with it."""
    chunks: dict[str, Chunk] = {}
    if deps.settings.search_question:
        k = deps.settings.question_depth
        for name in (s for s in sources if s != WEB):
            found = search_source(question, name, deps, k, of_question=True)
            chunks = merge_chunks(chunks, found["chunks"])
    return chunks


def with_numbers(numbers: dict[str, int], chunks: list[Chunk]) -> dict[str, int]:
    """The run's excerpt numbers (chunk id -> n, as first shown), with `chunks` not shown
    before numbered on from the last."""
    numbers = dict(numbers)
    for chunk in chunks:
        numbers.setdefault(chunk.id, len(numbers) + 1)
    return numbers


def report_excerpts(state: dict[str, Any], said: str) -> list[Chunk]:
    """The excerpts the run read, in the order it read them, those that `said` (what the
    agent wrote from them) cites first."""
    chunks = state.get("chunks", {})
    numbers = state.get("numbers", {})
    read = sorted((n, chunk_id) for chunk_id, n in numbers.items() if chunk_id in chunks)
    marked = set(cited(said))
    first = [chunk_id for n, chunk_id in read if n in marked]
    ordered = first + [chunk_id for _, chunk_id in read if chunk_id not in first]
    return [chunks[chunk_id] for chunk_id in ordered[:REPORT_EXCERPTS]]
