from concurrent.futures import ThreadPoolExecutor

from deepsift.deps import Deps
from deepsift.nodes.hop import follow_names
from deepsift.nodes.route import plan_routes
from deepsift.sources import WEB, available_sources
from deepsift.state import SUB_QUERY_WEIGHT, Chunk, SearchTask, Usage, merge_chunks, result_list


def search_source(
    query: str,
    source: str,
    deps: Deps,
    k: int | None = None,
    of_question: bool = False,
    weight: float = 1.0,
) -> dict:
    """One query in one source (a collection, or the web), as a state update: the chunks found,
    and for the web what its rephrasing cost and what failed."""
    if source == WEB:
        found = deps.web.search(query, deps.llm)
        hits = sorted(found.chunks, key=lambda c: -c.score)
        chunks = result_list(hits, weight=weight)
        return {"chunks": chunks, "usage": found.usage, "notes": found.notes}
    vector = deps.embedder.embed_queries([query])[0]
    hits = deps.store.search(source, query, vector, k or deps.settings.top_k)
    return {"chunks": result_list(hits, of_question, weight)}


def search(task: SearchTask, deps: Deps) -> dict:
    """One branch of the fan-out: the question itself, or a decomposed sub-query."""
    weight = 1.0 if task["of_question"] else SUB_QUERY_WEIGHT
    return search_source(
        task["query"], task["source"], deps, task["k"], task["of_question"], weight
    )


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
        found = list(pool.map(lambda s: search_source(query, s, deps), routes[0].sources))
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
