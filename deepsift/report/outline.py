"""The report's outline, planned from the evidence without a model call: which sections, in
which order, each with its own best excerpts."""

import numpy as np
from pydantic import BaseModel

from deepsift.graph.ranking import ranked
from deepsift.graph.state import ResearchState
from deepsift.llm.models import Embedder, similarities
from deepsift.records import Chunk
from deepsift.report.claims import names

# Sub-queries this similar (MiniLM cosine) may ask the same thing in other words; they do when
# their searches also found mostly the same chunks (Jaccard), and then share one section. On a
# small corpus "What caused X?" and "How did the Authority respond to X?" score 0.87 but found
# a third of their chunks in common: two sections.
SAME_TOPIC = 0.8
SAME_FINDS = 0.5


class PlannedSection(BaseModel):
    queries: list[str]  # the sub-queries it answers, the first asked first
    chunks: list[Chunk]  # its excerpts, best first
    part: int = 0  # 1, 2 … : goes on from the same queries' next excerpts


def outline(
    state: ResearchState, embedder: Embedder, sections: int, excerpts: int
) -> list[PlannedSection]:
    """At most `sections` sections of `excerpts` excerpts each, in the order their sub-queries
    were asked.

    Sub-queries that ask the same thing share a section (a topic). A chunk goes to the topic of
    the first-asked sub-query whose search returned it; one that only the question's own search
    or the LLM-free hop returned joins, after the topic's own, the topic whose first query is
    nearest to its text. Each group is in order of nearness to that query. Every topic gets a
    section, the topics with the run's best-ranked evidence first; sections left over go on a
    topic from its next excerpts (`part`), the nearest first."""
    order = ranked(state)
    asked = list(dict.fromkeys(state.get("sub_queries", [])))
    if not order or not asked:
        return []
    own = {q for c in order for q in c.queries} & set(asked)
    finds = {q: {c.id for c in order if q in c.queries} for q in asked}
    topics = _topics([q for q in asked if q in own] or asked, finds, embedder)
    of_query = {query: n for n, topic in enumerate(topics) for query in topic}
    found = {
        c.id: min(ns) for c in order if (ns := [of_query[q] for q in c.queries if q in of_query])
    }
    firsts = [_with_names(topic[0], state.get("question", "")) for topic in topics]
    near = similarities(embedder, firsts, [c.text for c in order], documents=True)
    home = {c.id: found.get(c.id, int(near[:, i].argmax())) for i, c in enumerate(order)}
    nearness = {c.id: float(near[home[c.id], i]) for i, c in enumerate(order)}
    grouped: dict[int, list[Chunk]] = {}
    for chunk in sorted(order, key=lambda c: (c.id not in found, -nearness[c.id])):
        grouped.setdefault(home[chunk.id], []).append(chunk)
    rank = {chunk.id: n for n, chunk in enumerate(order)}
    strongest = sorted(grouped, key=lambda n: min(rank[c.id] for c in grouped[n]))[:sections]
    parts = {(n, 0): grouped[n][:excerpts] for n in strongest}
    # Sections left over go on a topic from its next own finds and the orphans nearer to it
    # than most chunks are to theirs; a part needs half a section's excerpts to say enough.
    typical = float(np.median(list(nearness.values())))
    least = max(2, (excerpts + 1) // 2)
    further = {}
    for n in strongest:
        rest = [c for c in grouped[n][excerpts:] if c.id in found or nearness[c.id] >= typical]
        for k in range(1, len(rest) // excerpts + 2):
            if len(part := rest[(k - 1) * excerpts : k * excerpts]) >= least:
                further[n, k] = part
    closest = sorted(further, key=lambda p: (p[1], -sum(nearness[c.id] for c in further[p])))
    parts |= {p: further[p] for p in closest[: sections - len(parts)]}
    return [PlannedSection(queries=topics[n], chunks=parts[n, k], part=k) for n, k in sorted(parts)]


def _with_names(query: str, question: str) -> str:
    """`query` with the question's names that it lacks: a small model's sub-query often says
    "it" for the question's subject ("How much did it cost?"), and would draw no chunk about
    that subject. Each query gets those it lacks, so they favour none of the queries."""
    said = set(names(query))
    return " ".join([query, *dict.fromkeys(n for n in names(question) if n not in said)])


def _topics(queries: list[str], finds: dict[str, set[str]], embedder: Embedder) -> list[list[str]]:
    """Queries grouped by topic, in the order asked: a query that repeats an earlier one, in
    its words (SAME_TOPIC) and in what its search found (SAME_FINDS), joins its topic; any
    other opens a new one."""
    if len(queries) == 1:
        return [queries]
    similarity = similarities(embedder, queries, queries)

    def repeats(i: int, j: int) -> bool:
        a, b = finds[queries[i]], finds[queries[j]]
        shared = len(a & b) / len(a | b) if a or b else 1.0  # neither found any: words alone
        return similarity[i][j] >= SAME_TOPIC and shared >= SAME_FINDS

    topics: list[list[int]] = []
    for i in range(len(queries)):
        same = [t for t in topics if any(repeats(i, j) for j in t)]
        if same:
            same[0].append(i)
        else:
            topics.append([i])
    return [[queries[i] for i in topic] for topic in topics]
