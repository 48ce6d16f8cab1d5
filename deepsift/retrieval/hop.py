"""The LLM-free hop: from the run's best chunks to the documents they lead to, by the names
they mention (bridge.py) and the documents they refer to by number (references.py), with no
model call."""

from collections.abc import Mapping
from typing import Any

from deepsift.deps import Deps
from deepsift.records import Chunk
from deepsift.retrieval.bridge import asked_names, bridge_names, bridge_queries, names_itself
from deepsift.retrieval.ranking import merge_chunks, question_best, ranked, result_list
from deepsift.retrieval.references import filed_under, referenced_numbers
from deepsift.retrieval.sources import WEB

# A document referred to by number is followed only where the question's own search finds it
# too, in its SUPPORT_CHUNKS best chunks (0: always): passages refer to documents that have
# nothing to do with the question (the process document EIP-1, in dozens of EIPs). On the EIP
# folder it raised recall@5 .853 -> .869; the RFC folder's was unchanged (benchmarks/folders.md).
SUPPORT_CHUNKS = 100


# A name of several words without a page of its own is still followed where at most this many
# documents mention it (0: never): a person or a place is named in few passages, a folder's
# common words ("Rust", "EIP", "Cargo") in hundreds of files, and a lone capitalised word is
# as often a heading ("Conclusion") as a name. Their hits count UNPAGED_WEIGHT in the fusion.
# Passages titled by an opaque id (2WikiMultiHopQA, doc-<hash> titles) rose from recall@5 .633
# to .707 (benchmarks/folders.md).
RARE_NAME_DOCUMENTS = 5
UNPAGED_WEIGHT = 0.5


def next_hop(state: Mapping[str, Any], deps: Deps) -> dict:
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
    asked, names_lead = {}, False
    if not followed:  # references first: a number names its document more surely than a name
        lead = question_best(known.values())
        references = follow_references(question, lead, collections, deps, known)
        pages = follow_names(question, [], collections, deps, {**known, **references}, asked=True)
        asked = merge_chunks(references, pages)
        names_lead = any(
            names_itself(c.title, name) for c in pages.values() for name in asked_names(question)
        )
    pool = merge_chunks(known, asked)
    order = [c for c in ranked({**state, "chunks": pool}) if c.id not in followed]
    if not followed:
        names = asked_names(question)
        order = order[:1] + [c for c in order[1:] if any(names_itself(c.title, n) for n in names)]
    top = order[: deps.settings.hop_chunks]
    if not top:
        return {}
    linked = follow_names(question, top, collections, deps, pool, names_lead=names_lead)
    return {"chunks": merge_chunks(asked, linked), "hopped": [c.id for c in top]}


def follow_references(
    question: str,
    chunks: list[Chunk],
    collections: list[str],
    deps: Deps,
    known: dict[str, Chunk],
) -> dict[str, Chunk]:
    """The documents that `chunks` refer to by number ("RFC 2025"), at most `hop_references`
    of them: each one's best chunk for the question, carrying the order it was found in."""
    limit = deps.settings.hop_references
    numbers = [n for c in chunks for n in referenced_numbers(c.text, question)]
    if not limit or not numbers:
        return {}
    vector = deps.embedder.embed_queries([question])[0]
    own = {c.source for c in chunks}
    linked = sum(c.link_rank is not None for c in known.values())
    found: dict[str, Chunk] = {}
    supported: dict[str, set[str]] = {}  # each collection's documents the question finds
    for number in dict.fromkeys(numbers):
        for collection in collections:
            for source in deps.store.sources_containing(collection, number):
                if filed_under(source) != number or source in own or len(found) >= limit:
                    continue
                if SUPPORT_CHUNKS and collection not in supported:
                    hits = deps.store.search(collection, question, vector, SUPPORT_CHUNKS)
                    supported[collection] = {c.source for c in hits}
                if SUPPORT_CHUNKS and source not in supported[collection]:
                    continue
                for best in deps.store.search(collection, question, vector, 1, [source]):
                    best = result_list([best])[best.id]
                    found[best.id] = best.model_copy(update={"link_rank": linked})
                    linked += 1
    return found


def _weighed(chunk: Chunk, weight: float) -> Chunk:
    return chunk.model_copy(update={"fused": chunk.fused * weight})


def _rare(name: str, collections: list[str], deps: Deps) -> bool:
    if " " not in name:
        return False
    most = RARE_NAME_DOCUMENTS + 1
    mentions = sum(deps.store.mentioning(c, name, most) for c in collections)
    return 1 <= mentions <= RARE_NAME_DOCUMENTS  # none: not a name the collection holds


def follow_names(
    question: str,
    top: list[Chunk],
    collections: list[str],
    deps: Deps,
    known: dict[str, Chunk],
    asked: bool = False,
    names_lead: bool = False,
) -> dict[str, Chunk]:
    """The hits of every bridge name of `top` in `collections` (and, if `asked`, of the names in
    the question, first); a name's own page (a document titled with it) that the question's
    lead does not already hold carries the order it was found in, after the pages linked in
    `known`. None where no name has a page of its own, unless `names_lead` (a name the
    question holds had one)."""
    settings = deps.settings
    if not settings.hop_names:  # the hop is off
        return {}
    names = bridge_names(question, top, settings.hop_names)
    queries = [(name, name) for name in asked_names(question)] if asked else []
    queries += [(name, query) for name in names for query in bridge_queries(name, question)]
    if not queries:
        return {}
    vectors = deps.embedder.embed_queries([query for _, query in queries])
    found: dict[str, list[dict[str, Chunk]]] = {}  # each name's result lists
    paged: set[str] = set()  # the names that have a page of their own
    placed: set[str] = set()
    linked = sum(c.link_rank is not None for c in known.values())
    lead = {c.id for c in question_best(known.values())}
    for (name, query), vector in zip(queries, vectors, strict=True):
        for collection in collections:
            hits = result_list(deps.store.search(collection, query, vector, settings.top_k))
            for chunk_id, chunk in hits.items():
                if not names_itself(chunk.title, name):
                    continue
                paged.add(name)
                seen = known.get(chunk_id) or chunk
                own_page = query == name and chunk_id not in placed
                if own_page and seen.link_rank is None and chunk_id not in lead:
                    hits[chunk_id] = chunk.model_copy(update={"link_rank": linked})
                    placed.add(chunk_id)
                    linked += 1
            found.setdefault(name, []).append(hits)
    # Where no followed name has a page of its own (a folder of files, titled by file name or
    # by their first heading, or passages titled by an id), only the rare names lead somewhere:
    # the common ones' hits only crowd the ranking (benchmarks/folders.md). Where documents are
    # titled by names, even a name without a page finds what the question asks of it.
    if not paged and not names_lead and not settings.hop_unpaged_names:
        found = {
            name: [{i: _weighed(c, UNPAGED_WEIGHT) for i, c in hits.items()} for hits in lists]
            for name, lists in found.items()
            if _rare(name, collections, deps)
        }
    chunks: dict[str, Chunk] = {}
    for hits in (hits for lists in found.values() for hits in lists):
        chunks = merge_chunks(chunks, hits)
    return chunks
