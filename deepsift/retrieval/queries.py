"""Which new queries are worth a search: one that re-asks a searched query in other words finds
nothing new."""

from deepsift.deps import Deps
from deepsift.llm.embedders import similarities


def drop_rephrasings(new: list[str], searched: list[str], deps: Deps) -> list[str]:
    """Drop queries that re-ask a searched one in other words (small models often do):
    searching them again finds nothing new."""
    if not new:
        return new
    similarity = similarities(deps.embedder, new, searched)
    return [
        query
        for query, row in zip(new, similarity, strict=True)
        if row.max() < deps.embedder.cuts.same_query
    ]
