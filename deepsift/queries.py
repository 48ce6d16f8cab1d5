"""Clean the queries a model proposes: trimmed, non-empty, new, and no more than allowed."""


def clean_queries(proposed: list[str], limit: int, already: list[str] = ()) -> list[str]:
    seen = {q.casefold() for q in already}
    kept: list[str] = []
    for query in proposed:
        query = " ".join(str(query).split())
        if query and query.casefold() not in seen:
            seen.add(query.casefold())
            kept.append(query)
    return kept[:limit]
