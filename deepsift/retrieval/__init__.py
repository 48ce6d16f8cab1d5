"""How queries become ranked chunks, shared by every agent: the sources a run may search
(sources.py), routing each query to them (routing.py), the search call and which searches a
run makes (search.py), new queries worth a search (queries.py), the LLM-free hop by names and
references (hop.py, bridge.py, references.py), the fusion and the run's ranking (ranking.py),
and the search of the agents that search as they reason (inline.py).

May import deps, web, store, llm, config, errors, records, text and prompts; never run,
report, nodes, agents or anything above them.
"""
