from deepsift.deps import Deps
from deepsift.sources import WEB
from deepsift.state import SearchTask


def search_source(query: str, source: str, deps: Deps) -> dict:
    """One query in one source (a collection, or the web), as a state update: the chunks found,
    and for the web what its rephrasing cost and what failed."""
    if source == WEB:
        found = deps.web.search(query, deps.llm)
        chunks = {chunk.id: chunk for chunk in found.chunks}
        return {"chunks": chunks, "usage": found.usage, "notes": found.notes}
    vector = deps.embedder.embed([query])[0]
    hits = deps.store.search(source, query, vector, deps.settings.top_k)
    return {"chunks": {chunk.id: chunk for chunk in hits}}


def search(task: SearchTask, deps: Deps) -> dict:
    """One branch of the fan-out."""
    return search_source(task["query"], task["source"], deps)
