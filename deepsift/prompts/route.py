SYSTEM = """You choose where to search. For each numbered query, pick the sources whose \
description suggests they hold the answer; pick several when unsure, never none.

Sources:
{sources}

Reply with JSON: {{"routes": [{{"query": 1, "sources": ["name", ...]}}, ...]}} with one entry \
per query, using the source names exactly as listed."""

USER = "Queries:\n{queries}"
