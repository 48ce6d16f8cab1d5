"""The search of the agents that search as they reason (Search-o1, ReAct): their entry (the
run's sources, and the question's own search so their ranking is never worse than one search),
one query searched in its routed sources with the LLM-free hop, the run's excerpt numbers, and
the excerpts their short report cites."""

from concurrent.futures import ThreadPoolExecutor
from contextvars import copy_context
from typing import Any, NamedTuple

from deepsift.deps import Deps
from deepsift.graph.ranking import merge_chunks
from deepsift.graph.sources import WEB, asked_for_web, available_sources, resolve_sources
from deepsift.nodes.hop import follow_names
from deepsift.nodes.route import plan_routes
from deepsift.nodes.search import search_source
from deepsift.records import Chunk, Usage
from deepsift.text.marks import cited

REPORT_EXCERPTS = 8  # the excerpts read that the short report is written from, at most


def entry(state: dict[str, Any], deps: Deps) -> dict:
    """The run's sources, checked before any LLM call; and the question's own search in its
    collections (and the web, when the run asked for it), so the run's ranking fuses every
    later search with it."""
    named, web = state.get("sources_to_search"), state.get("web")
    sources = resolve_sources(deps, named, web)
    asked = asked_for_web(named, web, sources)
    found = question_search(state["question"], sources, deps, web=asked)
    return {"sources_to_search": sources, **found} | ({"web": True} if asked else {})


class Searched(NamedTuple):
    chunks: dict[str, Chunk]  # every chunk found
    best: list[Chunk]  # the n the agent reads (read_first)
    usage: Usage  # what routing and the web cost
    notes: list[str]  # the web's failures
    web_searches: list[str]  # each web search and what it returned


def search_routed(
    query: str, sources_to_search: list[str] | None, deps: Deps, known: dict[str, Chunk], n: int
) -> Searched:
    """One query of an agent that searches as it reasons (Search-o1, ReAct), in the sources the
    router picks for it, in parallel, and in its collections the pages of the names its best
    hits mention (the LLM-free hop; `known`: the run's chunks so far)."""
    sources = available_sources(sources_to_search, deps)
    routes, usage = plan_routes([query], sources, deps)
    with ThreadPoolExecutor(max_workers=max(1, len(routes[0].sources))) as pool:
        # In this thread's context: a cancelled run's web rephrasing is not sent.
        searches = [
            pool.submit(copy_context().run, search_source, query, source, deps)
            for source in routes[0].sources
        ]
        found = [search.result() for search in searches]
    merged = merged_updates(found)
    chunks = merged["chunks"]
    own = sorted(chunks.values(), key=lambda c: -c.score)
    collections = [s for s in routes[0].sources if s != WEB]
    top = [c for c in own if c.collection in collections][: deps.settings.hop_chunks]
    linked = follow_names(query, top, collections, deps, known, asked=True) if top else {}
    return Searched(
        merge_chunks(chunks, linked),
        read_first(own, linked, n),
        usage + merged["usage"],
        merged["notes"],
        merged["web_searches"],
    )


def merged_updates(updates: list[dict[str, Any]]) -> dict[str, Any]:
    """Several searches' state updates (search_source) as one."""
    merged: dict[str, Any] = {"chunks": {}, "usage": Usage(), "notes": [], "web_searches": []}
    for update in updates:
        merged["chunks"] = merge_chunks(merged["chunks"], update["chunks"])
        merged["usage"] = merged["usage"] + update.get("usage", Usage())
        merged["notes"] += update.get("notes", [])
        merged["web_searches"] += update.get("web_searches", [])
    return merged


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


def question_search(
    question: str, sources: list[str], deps: Deps, web: bool = False
) -> dict[str, Any]:
    """The question as asked, searched in the run's collections (and the web with `web`), so
    the ranking of an agent that searches as it reasons fuses every later search with it; as
    one state update."""
    names = [s for s in sources if s != WEB] if deps.settings.search_question else []
    names += [WEB] if web else []
    k = deps.settings.question_depth
    return merged_updates(
        [search_source(question, name, deps, k, of_question=True) for name in names]
    )


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
