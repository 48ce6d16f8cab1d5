"""The search call: a query in one source (a collection, or the web), its hits as one result
list of the run's fusion; and which searches a run makes of the question, its sub-queries and the
report's parts."""

from collections.abc import Iterable

from deepsift.deps import Deps
from deepsift.records import Chunk, Route
from deepsift.retrieval.ranking import (
    DOCUMENT_SPREAD,
    SUB_QUERY_WEIGHT,
    first_documents,
    result_list,
)
from deepsift.retrieval.references import filed_under
from deepsift.retrieval.sources import WEB
from deepsift.text.queries import same_query

# The first chunks of the documents a report part's search ranks first join its excerpts: a
# document's opening (summary, abstract, purpose) states what it adds most plainly.
OPENED_DOCUMENTS, OPENING_CHUNKS = 2, 2


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
    k = k or deps.settings.top_k
    if of_question:  # as deep as one search: k documents, however many chunks each has
        hits = first_documents(hybrid_search(query, source, deps, k * DOCUMENT_SPREAD), k)
    else:
        hits = hybrid_search(query, source, deps, k)
    return {"chunks": result_list(hits, of_question, weight)}


def hybrid_search(query: str, collection: str, deps: Deps, k: int) -> list[Chunk]:
    """One search of one collection, dense and BM25 fused (deepsift.store): its k best chunks,
    best first."""
    vector = deps.embedder.embed_queries([query])[0]
    return deps.store.search(collection, query, vector, k)


def search_among(query: str, collection: str, ids: list[str], deps: Deps, k: int) -> list[Chunk]:
    """The k chunks of `ids` (a finished run's evidence) in one collection nearest `query`, by
    the same hybrid search; none when `ids` is empty."""
    if not ids:
        return []
    vector = deps.embedder.embed_queries([query])[0]
    return deps.store.search(collection, query, vector, k, ids=ids)


def within_document(query: str, document: Chunk, deps: Deps, k: int) -> list[Chunk]:
    """The k chunks of `document`'s stored document nearest `query`, by the same hybrid search
    (a follow-up about one document: the run may hold its other chunks, not the one that
    answers); [] for a web page or a collection dropped since."""
    if document.collection == WEB or not deps.store.exists(document.collection):
        return []
    vector = deps.embedder.embed_queries([query])[0]
    return deps.store.search(document.collection, query, vector, k, sources=[document.source])


def filed_documents(number: str, collections: list[str], deps: Deps, most: int) -> list[Chunk]:
    """The first chunk (it carries the document's facts) of each stored document whose file is
    filed under `number` ("eip-4844.md", "pep-0008.txt"), at most `most`."""
    found = []
    for collection in collections:
        if collection == WEB or not deps.store.exists(collection):
            continue
        for source in deps.store.sources_containing(collection, number):
            if filed_under(source) == number.lstrip("0") and len(found) < most:
                found += deps.store.opening(collection, source, 1)
    return found


def search_branch(query: str, source: str, k: int, of_question: bool, deps: Deps) -> dict:
    """One branch of the research graph's fan-out: the question itself, or a decomposed
    sub-query, whose hits count SUB_QUERY_WEIGHT in the fusion."""
    weight = 1.0 if of_question else SUB_QUERY_WEIGHT
    return search_source(query, source, deps, k, of_question, weight)


def question_sources(sources: list[str], web: bool | None, deps: Deps) -> list[str]:
    """Where the question as asked is searched, as deep as one search alone would: every
    collection (setting search_question), so the run's ranking never loses what one search
    finds; the web too when the run asked for it, since routing alone may send every sub-query
    elsewhere."""
    names = [name for name in sources if name != WEB] if deps.settings.search_question else []
    return names + ([WEB] if web and WEB in sources else [])


def unsearched(routes: list[Route], searched: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """The (query, source) searches the routes ask for, less those `searched` already holds.
    A sub-query that is the question as asked (a model that does not split it, or decompose's
    fallback) is not searched again where the question is: counted twice in the fusion, its
    shallower search's hits outranked the question's own (on the RFC folder, recall@5 of
    aggregation questions .72 -> .78; benchmarks/folders.md)."""
    done = {(same_query(query), source) for query, source in searched}
    return [
        (route.query, name)
        for route in routes
        for name in route.sources
        if (same_query(route.query), name) not in done
    ]


def search_parts(
    parts: list[str],
    queries: list[list[str]],
    collections: list[str],
    known: Iterable[str],
    deps: Deps,
) -> tuple[dict[str, Chunk], list[list[tuple[str, str]]]]:
    """Each report part searched with its `queries` in `collections` (no model call; the web
    is searched only by the research itself), so that what a part asks is found even when no
    sub-query asked it, with the openings of the documents it ranks first; the chunks not in
    `known` (ids), each marked with its part as query, and for each part those documents
    (collection, source), best first."""
    found: dict[str, Chunk] = {}
    leads = []
    for part, part_queries in zip(parts, queries, strict=True):
        hits: list[Chunk] = []
        for query in part_queries:
            for collection in collections:
                searched = search_source(query, collection, deps, weight=0)
                hits += searched["chunks"].values()
        hits.sort(key=lambda chunk: -chunk.score)
        lead = list(dict.fromkeys((chunk.collection, chunk.source) for chunk in hits))
        for collection, source in lead[:OPENED_DOCUMENTS]:
            hits += deps.store.opening(collection, source, OPENING_CHUNKS)
        for chunk in hits:
            found.setdefault(chunk.id, chunk.model_copy(update={"query": part}))
        leads.append(lead)
    known = set(known)
    return {i: c for i, c in found.items() if i not in known}, leads
