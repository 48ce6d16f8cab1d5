"""Checks of a report's sentences, all in code: the figures and names a sentence states must
stand in the excerpts it cites (claims), what it states against what they state (statements:
repeats, stitched figures, unsupported claims, causes, a misdescribed source), and what a reader
would stop at (defects).

May import the writing stage's sentence schema (deepsift.report.writing.cited_text) and text.
"""
