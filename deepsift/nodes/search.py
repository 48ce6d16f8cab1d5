from concurrent.futures import ThreadPoolExecutor

from deepsift.deps import Deps
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
    query: str, sources_to_search: list[str] | None, deps: Deps
) -> tuple[dict[str, Chunk], Usage, list[str]]:
    """One query of an agent that searches as it reasons (Search-o1, ReAct), in the sources the
    router picks for it, in parallel: the chunks found, what routing and the web cost, and the
    web's notes."""
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
    return chunks, usage, notes


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
