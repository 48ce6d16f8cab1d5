"""Which evidence answers each part: the excerpt sentences a section is written from, chosen
without a model; how a document is named from its own facts; the amounts a part sets against
each other, compared in code.

May import the question and checks stages, retrieval, llm (embeddings), ingest, records, text.
"""
