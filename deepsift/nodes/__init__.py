"""The research graph's nodes, one module each, and nothing that is not a node (the
architecture test checks). deepsift.agents.deepsift wires them.

May import report, graph, deps, web, store, llm, config, errors, records, text and prompts;
never agents or anything above them.
"""
