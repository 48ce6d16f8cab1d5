"""Prompt text, one module per node or agent, and the ReAct agent's worked examples; no logic.

Imports nothing of deepsift.
"""
