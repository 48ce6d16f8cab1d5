"""The report's outline, planned from the evidence without a model call: which sections, in
which order, each with its own best excerpts."""

from pydantic import BaseModel

from deepsift.claims import names
from deepsift.models import Embedder, similarities
from deepsift.state import Chunk, ResearchState, ranked

# Sub-queries this similar (MiniLM cosine) ask the same thing in other words: one section.
SAME_TOPIC = 0.8


class PlannedSection(BaseModel):
    queries: list[str]  # the sub-queries it answers, the first asked first
    chunks: list[Chunk]  # its excerpts, best first


def outline(
    state: ResearchState, embedder: Embedder, sections: int, excerpts: int
) -> list[PlannedSection]:
    """At most `sections` sections of `excerpts` excerpts each, in the order their sub-queries
    were asked.

    Sub-queries that ask the same thing share a section. A chunk goes to the section of the
    first-asked sub-query whose search returned it; one that only the question's own search or
    the LLM-free hop returned joins, after the section's own, the section whose first query is
    nearest to its text. The sections kept are those whose evidence the run ranks best, from
    any round."""
    order = ranked(state)
    asked = list(dict.fromkeys(state.get("sub_queries", [])))
    if not order or not asked:
        return []
    own = {q for c in order for q in c.queries} & set(asked)
    topics = _topics([q for q in asked if q in own] or asked, embedder)
    of_query = {query: n for n, topic in enumerate(topics) for query in topic}
    found = {
        c.id: min(ns) for c in order if (ns := [of_query[q] for q in c.queries if q in of_query])
    }
    orphans = [c for c in order if c.id not in found]
    if orphans:
        firsts = [_with_names(topic[0], state["question"]) for topic in topics]
        texts = [c.text for c in orphans]
        nearest = similarities(embedder, firsts, texts, documents=True).argmax(axis=0)
        home = {c.id: int(n) for c, n in zip(orphans, nearest, strict=True)}
    else:
        home = {}
    # A section's own finds first, then the orphans it took in; each in the run's rank order.
    grouped: dict[int, list[Chunk]] = {}
    for chunk in [c for c in order if c.id in found] + orphans:
        n = found.get(chunk.id, home.get(chunk.id))
        grouped.setdefault(n, []).append(chunk)
    rank = {chunk.id: n for n, chunk in enumerate(order)}
    strongest = sorted(grouped, key=lambda n: min(rank[c.id] for c in grouped[n]))[:sections]
    return [
        PlannedSection(queries=topics[n], chunks=grouped[n][:excerpts]) for n in sorted(strongest)
    ]


def _with_names(query: str, question: str) -> str:
    """`query` with the question's names that it lacks: a small model's sub-query often says
    "it" for the question's subject ("How much did it cost?"), and would draw no chunk about
    that subject. Each query gets those it lacks, so they favour none of the queries."""
    said = set(names(query))
    return " ".join([query, *dict.fromkeys(n for n in names(question) if n not in said)])


def _topics(queries: list[str], embedder: Embedder) -> list[list[str]]:
    """Queries grouped by topic, in the order asked: a query that repeats an earlier one
    (SAME_TOPIC) joins its topic; any other opens a new one."""
    if len(queries) == 1:
        return [queries]
    similarity = similarities(embedder, queries, queries)
    topics: list[list[int]] = []
    for i in range(len(queries)):
        same = [t for t in topics if max(similarity[i][j] for j in t) >= SAME_TOPIC]
        if same:
            same[0].append(i)
        else:
            topics.append([i])
    return [[queries[i] for i in topic] for topic in topics]
