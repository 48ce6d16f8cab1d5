"""The search of the agents that search as they reason (Search-o1, ReAct): their entry (the
run's sources, and the question's own search so their ranking is never worse than one search),
and one query searched in its routed sources with the LLM-free hop."""

from concurrent.futures import ThreadPoolExecutor
from contextvars import copy_context
from typing import Any, NamedTuple

from deepsift.deps import Deps
from deepsift.records import Chunk, Usage
from deepsift.retrieval.hop import follow_names
from deepsift.retrieval.ranking import merge_chunks
from deepsift.retrieval.routing import plan_routes
from deepsift.retrieval.search import question_sources, search_source
from deepsift.retrieval.sources import WEB, asked_for_web, available_sources, resolve_sources


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
    k = deps.settings.question_depth
    names = question_sources(sources, web, deps)
    return merged_updates(
        [search_source(question, name, deps, k, of_question=True) for name in names]
    )
