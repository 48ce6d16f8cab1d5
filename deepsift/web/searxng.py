"""SearXNG web search: a self-hosted metasearch instance's JSON API, no key needed."""

from typing import Any

import httpx

from deepsift.config import Settings
from deepsift.text.locations import is_url
from deepsift.web.filters import WebFilter
from deepsift.web.results import SearchError, WebResult


class SearxngSearch:
    def __init__(self, settings: Settings) -> None:
        base = settings.searxng_url
        self._endpoint = base if base.endswith("/search") else f"{base}/search"
        self._timeout = settings.web_timeout
        self._time_range = WebFilter.from_settings(settings).time_range

    def search(self, query: str) -> list[WebResult]:
        params = {"q": query, "format": "json"}
        if self._time_range:
            params["time_range"] = self._time_range
        try:
            response = httpx.get(self._endpoint, params=params, timeout=self._timeout)
            response.raise_for_status()
            reply = response.json()
            items = reply["results"]
        except Exception as e:  # the instance is outside our control: every failure is a note
            raise SearchError(f"web search for {query!r} failed: {self._reason(e)}") from e
        return [
            _result(item, position)
            for position, item in enumerate(items)
            if isinstance(item, dict) and is_url(str(item.get("url", "")))
        ]

    def _reason(self, e: Exception) -> str:
        if isinstance(e, httpx.HTTPStatusError):
            status = e.response.status_code
            hint = " (is json in the instance's search.formats?)" if status == 403 else ""
            return f"SearXNG answered {status} {e.response.reason_phrase}{hint}"
        if isinstance(e, httpx.TimeoutException):
            return f"no answer within {self._timeout:g} s"
        if isinstance(e, httpx.TransportError):
            return f"cannot connect to {self._endpoint}"
        if isinstance(e, (ValueError, KeyError, TypeError)):
            return f"{self._endpoint} did not answer with SearXNG's JSON results"
        return f"{type(e).__name__}: {e}"


def _result(item: dict[str, Any], position: int) -> WebResult:
    score = item.get("score")
    return WebResult(
        url=item["url"],
        title=item.get("title") or item["url"],
        snippet=item.get("content") or "",
        published=item.get("publishedDate") or "",
        # SearXNG's score sums its engines' votes; without one, its order is the ranking.
        score=float(score) if isinstance(score, int | float) else 1 / (1 + position),
    )
