from deepsift.deps import Deps
from deepsift.graph.bridge import asked_names, bridge_names, bridge_queries, names_itself
from deepsift.graph.ranking import in_lead, merge_chunks, ranked, result_list
from deepsift.graph.sources import WEB
from deepsift.graph.state import ResearchState
from deepsift.records import Chunk


def hop(state: ResearchState, deps: Deps) -> dict:
    """Follow the bridge with no model call: search the run's collections for the names that
    its best chunks (not followed before) mention and the question does not.

    The first hop starts where the question points: it looks up the names the question holds,
    then follows the best chunk and those names' own pages, not the second-best chunk, which
    in a chain of hops is more often a neighbour of the first than a link in the chain
    (benchmarks/multihop.md)."""
    followed = set(state.get("hopped", []))
    collections = [name for name in state["sources_to_search"] if name != WEB]
    if not collections:
        return {}
    question, known = state["question"], state.get("chunks", {})
    asked = {} if followed else follow_names(question, [], collections, deps, known, asked=True)
    pool = merge_chunks(known, asked)
    order = [c for c in ranked({**state, "chunks": pool}) if c.id not in followed]
    if not followed:
        names = asked_names(question)
        order = order[:1] + [c for c in order[1:] if any(names_itself(c.title, n) for n in names)]
    top = order[: deps.settings.hop_chunks]
    if not top:
        return {}
    linked = follow_names(question, top, collections, deps, pool)
    return {"chunks": merge_chunks(asked, linked), "hopped": [c.id for c in top]}


def follow_names(
    question: str,
    top: list[Chunk],
    collections: list[str],
    deps: Deps,
    known: dict[str, Chunk],
    asked: bool = False,
) -> dict[str, Chunk]:
    """The hits of every bridge name of `top` in `collections` (and, if `asked`, of the names in
    the question, first); a name's own page (a document titled with it) that the question's
    lead does not already hold carries the order it was found in, after the pages linked in
    `known`."""
    settings = deps.settings
    if not settings.hop_names:  # the hop is off
        return {}
    names = bridge_names(question, top, settings.hop_names)
    queries = [(name, name) for name in asked_names(question)] if asked else []
    queries += [(name, query) for name in names for query in bridge_queries(name, question)]
    if not queries:
        return {}
    vectors = deps.embedder.embed_queries([query for _, query in queries])
    chunks: dict[str, Chunk] = {}
    linked = sum(c.link_rank is not None for c in known.values())
    for (name, query), vector in zip(queries, vectors, strict=True):
        for collection in collections:
            hits = result_list(deps.store.search(collection, query, vector, settings.top_k))
            for chunk_id, chunk in hits.items():
                seen = chunks.get(chunk_id) or known.get(chunk_id) or chunk
                own_page = query == name and names_itself(chunk.title, name)
                if own_page and seen.link_rank is None and not in_lead(seen):
                    hits[chunk_id] = chunk.model_copy(update={"link_rank": linked})
                    linked += 1
            chunks = merge_chunks(chunks, hits)
    return chunks
