"""What the research graph's nodes share: its state and reducers (state.py), the run's ranking
(ranking.py), its budget of model calls (budget.py), the sources a run may search
(sources.py), the timing of each step (steps.py), and the rules of the LLM-free hop
(bridge.py). The graph is wired by the agent that runs it: deepsift.agents.deepsift.

May import deps, web, store, llm, config, errors, records and text; never report, nodes,
agents or anything above them.
"""
