"""Writing: the model calls that write each section and the frame (title, key findings,
conclusion) from the chosen evidence, the schema of cited sentences they fill, how excerpts are
shown to the model, a document's sentence made the report's, and how long a report is; also the
answering agents' short report and the short answer.

May import the evidence, checks and output stages, llm, prompts, deps, run, records and text.
"""
