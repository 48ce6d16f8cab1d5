"""Tavily web search: results with their metadata (ODS 2.1.2), or one line saying what failed."""

import requests
from tavily import TavilyClient
from tavily import errors as tavily_errors

from deepsift.config import Settings
from deepsift.text.locations import is_url
from deepsift.web.filters import WebFilter
from deepsift.web.results import SearchError, WebResult


class TavilySearch:
    def __init__(self, settings: Settings) -> None:
        self._client = TavilyClient(
            api_key=settings.tavily_api_key, api_base_url=settings.tavily_base_url or None
        )
        self._results = settings.web_results
        self._timeout = settings.web_timeout
        # Tavily filters too; its results are still checked after (deepsift.web.filters).
        wanted = WebFilter.from_settings(settings)
        self._filters = {
            "include_domains": list(wanted.include) or None,
            "exclude_domains": list(wanted.exclude) or None,
            "time_range": wanted.time_range,
        }

    def search(self, query: str) -> list[WebResult]:
        try:
            reply = self._client.search(
                query, max_results=self._results, timeout=self._timeout, **self._filters
            )
        except Exception as e:  # the service is outside our control: every failure is a note
            raise SearchError(f"web search for {query!r} failed: {self._reason(e)}") from e
        return [
            WebResult(
                url=item["url"],
                title=item.get("title") or item["url"],
                snippet=item.get("content") or "",
                published=item.get("published_date") or "",
                score=float(item.get("score") or 0.0),
            )
            for item in reply.get("results", [])
            if is_url(item.get("url", ""))
        ]

    def _reason(self, e: Exception) -> str:
        known = {
            tavily_errors.InvalidAPIKeyError: "401 the Tavily API key was refused",
            tavily_errors.UsageLimitExceededError: "429 the Tavily usage limit is exceeded",
            tavily_errors.ForbiddenError: "403 forbidden",
            tavily_errors.TimeoutError: f"no answer within {self._timeout:g} s",
        }
        for kind, reason in known.items():
            if isinstance(e, kind):
                return reason
        if isinstance(e, requests.HTTPError) and e.response is not None:
            return f"{e.response.status_code} {e.response.reason}"
        if isinstance(e, requests.ConnectionError):
            return f"cannot connect to {self._client.base_url}"
        return f"{type(e).__name__}: {e}"
