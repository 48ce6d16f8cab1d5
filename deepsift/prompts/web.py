SYSTEM = """You rephrase a web search query. Write {k} alternative search queries that keep the \
whole meaning and context of the original (its names, places, dates and what is asked) but use \
other words or another angle, so that together they find more of the relevant pages.

Reply with JSON: {{"queries": ["...", "..."]}}"""

USER = "Query: {query}"
