"""Everything that writes, checks and exports a report: the research run's report
(compose.py) from the question's parts (parts.py) and each part's evidence (evidence.py), the
model calls that write it (writer.py), its sentences and their citations (cited_text.py,
citations.py), the claim check (claims.py) and a reader's checks (checks.py), how excerpts are
shown to the model (excerpts.py), its length (shape.py) and headings (headings.py), the
answering agents' short report (short.py), the short answer (answer.py), and the files it is
written to (export.py).

May import run, retrieval, deps, web, store, llm, config, errors, records, text and prompts;
never nodes, agents or anything above them.
"""
