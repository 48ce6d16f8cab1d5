"""The web source: Tavily search and the page fetcher."""
