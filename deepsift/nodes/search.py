from deepsift.deps import Deps
from deepsift.state import SearchTask
from deepsift.web.source import WEB


def search(task: SearchTask, deps: Deps) -> dict:
    """One branch of the fan-out: one query in one source (a collection, or the web)."""
    if task["collection"] == WEB:
        found = deps.web.search(task["query"], deps.llm)
        chunks = {chunk.id: chunk for chunk in found.chunks}
        return {"chunks": chunks, "usage": found.usage, "notes": found.notes}
    vector = deps.embedder.embed([task["query"]])[0]
    hits = deps.store.search(task["collection"], task["query"], vector, deps.settings.top_k)
    return {"chunks": {chunk.id: chunk for chunk in hits}}
