"""The search step: one branch of the fan-out, a query searched in one source."""

from deepsift.deps import Deps
from deepsift.graph.ranking import DOCUMENT_SPREAD, SUB_QUERY_WEIGHT, first_documents, result_list
from deepsift.graph.sources import WEB
from deepsift.graph.state import SearchTask


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
        return {
            "chunks": chunks,
            "usage": found.usage,
            "notes": found.notes,
            "web_searches": [found.said],
        }
    vector = deps.embedder.embed_queries([query])[0]
    k = k or deps.settings.top_k
    if of_question:  # as deep as one search: k documents, however many chunks each has
        hits = first_documents(deps.store.search(source, query, vector, k * DOCUMENT_SPREAD), k)
    else:
        hits = deps.store.search(source, query, vector, k)
    return {"chunks": result_list(hits, of_question, weight)}


def search(task: SearchTask, deps: Deps) -> dict:
    """One branch of the fan-out: the question itself, or a decomposed sub-query."""
    weight = 1.0 if task["of_question"] else SUB_QUERY_WEIGHT
    return search_source(
        task["query"], task["source"], deps, task["k"], task["of_question"], weight
    )
