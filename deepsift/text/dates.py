"""A document's date as a sort key: the Documents table's timeline, "the first" and "the
latest" of a part's documents, and a part asked as a history."""

import re

_YEAR = re.compile(r"\b(1[89]\d\d|2\d\d\d)\b")
_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")


def when(date: str) -> tuple[int, str]:
    """A date's sort key: an ISO date as it stands, else its year; undated last."""
    if iso := _ISO.search(date):
        return (0, iso[0])
    if year := _YEAR.search(date):
        return (0, year[0])
    return (1, "")
