"""Everything that writes, checks and exports a report: its outline (outline.py), the model
calls that write it (writer.py), its sentences and their citations (cited_text.py,
citations.py), the claim check (claims.py), how excerpts are shown to the model
(excerpts.py), its length (shape.py) and headings (headings.py), the answering agents' short
report (short.py), and the files it is written to (export.py).

May import graph, deps, web, store, llm, config, errors, records, text and prompts; never
nodes, agents or anything above them.
"""
