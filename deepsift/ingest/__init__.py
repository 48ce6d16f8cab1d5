"""Ingest: documents loaded from files (loaders.py; formats.py reads .rst, .pptx, .xlsx and .eml;
document.py is what both make), cut into chunks that carry their headings (chunking.py), and
embedded and stored, skipping what is unchanged (pipeline.py).

May import store, llm, config, errors, records and text.
"""
