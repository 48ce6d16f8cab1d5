"""Clean the queries a model proposes: trimmed, non-empty, new, and no more than allowed."""

import re

from deepsift.text.terms import STOPWORDS
from deepsift.text.words import words


def same_query(query: str) -> str:
    """What two queries that search alike share: their words, case folded."""
    return " ".join(str(query).split()).casefold()


def clean_queries(proposed: list[str], limit: int, already: list[str] = ()) -> list[str]:
    seen = {same_query(q) for q in already}
    kept: list[str] = []
    for query in proposed:
        query = " ".join(str(query).split())
        if query and same_query(query) not in seen:
            seen.add(same_query(query))
            kept.append(query)
    return kept[:limit]


def terms(text: str) -> set[str]:
    """The words of a query that carry meaning, case-folded."""
    return {word for word in words(text.casefold()) if word not in STOPWORDS}


def with_new_terms(proposed: list[str], searched: list[str]) -> list[str]:
    """The queries that add a term no searched query had: reordering or trimming the words
    already searched finds nothing new (small models often propose just that)."""
    known = set().union(*(terms(query) for query in searched))
    return [query for query in proposed if terms(query) - known]


_NUMBER = re.compile(r"\d+")


def without_invented_numbers(queries: list[str], question: str) -> list[str]:
    """The queries without the numbers the question does not hold: before any search, a model
    that writes one has made it up (the embedded model asks for "rfc 2014" and "rfc 2015"
    about two RFCs it was not told the numbers of). A query that then adds no term to the
    question is dropped."""
    asked = set(_NUMBER.findall(question))
    kept = []
    for query in queries:
        invented = set(_NUMBER.findall(query)) - asked
        if not invented:
            kept.append(query)
            continue
        rest = " ".join(w for w in query.split() if set(_NUMBER.findall(w)) & invented == set())
        if terms(rest) - terms(question):
            kept.append(rest)
    return kept
