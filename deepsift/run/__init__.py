"""What one run of a research graph holds and spends: its state and the reducers that merge
parallel branches (state.py), the timing and cost of each step (steps.py), and its budget of
model calls (budget.py). The default agent's graph is wired in deepsift.graph.

May import retrieval, deps, web, store, llm, config, errors, records and text; never report,
nodes, agents or anything above them.
"""
