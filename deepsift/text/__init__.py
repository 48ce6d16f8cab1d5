"""Rules about plain text, each defined once and used everywhere: sentences (sentences.py),
citation marks (marks.py), words (words.py), the queries a model proposes (queries.py), where
a document lives (locations.py: a URL or a file path), and text from documents made safe to
show (untrusted.py).

Imports nothing of deepsift.
"""
