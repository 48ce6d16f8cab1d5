"""The research graph's nodes, one module each and nothing that is not a node (the
architecture test checks): thin adapters, state in and update out, over the search
(deepsift.retrieval) and the report (deepsift.report). Only deepsift.graph, the wiring,
imports them.

May import report, run, retrieval, deps, web, store, llm, config, errors, records, text and
prompts; never agents or anything above them.
"""
