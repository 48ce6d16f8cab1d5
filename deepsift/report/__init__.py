"""A research run's report, one subpackage per stage it goes through (compose.py runs them in
order):

- question/: what the question asks, its parts;
- evidence/: which documents and which of their sentences answer each part, and the amounts
  they set against each other;
- writing/: the model calls that write the sections and the frame, the schema of cited
  sentences, how excerpts are shown, the report's length; the answering agents' short report
  and the short answer;
- checks/: every sentence held to its excerpts (figures, names, causes, repeats) and what a
  reader would stop at;
- output/: citations and Sources, the Documents table, headings, and the files it is written to.

May import run, retrieval, deps, web, store, llm, ingest, config, errors, records, text and
prompts; never followups, nodes, agents or anything above them.
"""
