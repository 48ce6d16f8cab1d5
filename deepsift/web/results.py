"""What every search backend returns: results with their metadata (ODS 2.1.2), or one line
saying what failed."""

from dataclasses import dataclass


class SearchError(Exception):
    """A web search that failed; str(e) is one line naming the query and why."""


@dataclass(frozen=True)
class WebResult:
    url: str
    title: str
    snippet: str
    published: str
    score: float
