"""The web source: Tavily search and the page fetcher.

Its name and description live here, light to import; `deepsift.sources` owns the rules."""

WEB = "web"
WEB_DESCRIPTION = "the public web, current events and facts not in the private collections"
