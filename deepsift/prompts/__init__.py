"""Prompt text, one module per node; no logic."""
