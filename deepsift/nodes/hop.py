from deepsift.bridge import bridge_queries
from deepsift.deps import Deps
from deepsift.sources import WEB
from deepsift.state import Chunk, ResearchState, merge_chunks, ranked, result_list


def hop(state: ResearchState, deps: Deps) -> dict:
    """Follow the bridge with no model call: search the run's collections for the names that
    its best chunks (not followed before) mention and the question does not."""
    settings = deps.settings
    followed = set(state.get("hopped", []))
    top = [c for c in ranked(state) if c.id not in followed][: settings.hop_chunks]
    queries = bridge_queries(state["question"], top, settings.hop_names)
    collections = [name for name in state["sources_to_search"] if name != WEB]
    if not queries or not collections:
        return {}
    chunks: dict[str, Chunk] = {}
    for query, vector in zip(queries, deps.embedder.embed_queries(queries), strict=True):
        for name in collections:
            hits = deps.store.search(name, query, vector, settings.top_k)
            chunks = merge_chunks(chunks, result_list(hits))
    return {"chunks": chunks, "hopped": [c.id for c in top]}
