"""The web source: a search backend (Tavily or SearXNG), the page fetcher, the result filters.

Its name, description and whether it is set up live here, light to import;
`deepsift.retrieval.sources` owns the rules.

May import ingest, store, llm, config, errors, records, text and prompts.
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from deepsift.config import Settings

WEB = "web"
WEB_DESCRIPTION = "the public web, current events and facts not in the private collections"


def web_configured(settings: "Settings") -> bool:
    """The chosen backend has what it needs: Tavily a key, SearXNG an address."""
    if settings.web_backend == "searxng":
        return bool(settings.searxng_url)
    return bool(settings.tavily_api_key)


def web_missing(settings: "Settings") -> str:
    """The one line saying what the web source lacks, for a run that asks for it."""
    if settings.web_backend == "searxng":
        return (
            "the web source with web_backend searxng needs a SearXNG address: set "
            "DEEPSIFT_SEARXNG_URL (an instance with its JSON API on)"
        )
    return (
        "the web source needs a Tavily API key: set DEEPSIFT_TAVILY_API_KEY (or TAVILY_API_KEY), "
        "or use SearXNG (DEEPSIFT_WEB_BACKEND=searxng, DEEPSIFT_SEARXNG_URL)"
    )
