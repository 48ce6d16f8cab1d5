from deepsift.deps import Deps
from deepsift.state import SearchTask


def search(task: SearchTask, deps: Deps) -> dict:
    """One branch of the fan-out: hybrid search of one collection for one query."""
    vector = deps.embedder.embed([task["query"]])[0]
    hits = deps.store.search(task["collection"], task["query"], vector, deps.settings.top_k)
    return {"chunks": {chunk.id: chunk for chunk in hits}}
