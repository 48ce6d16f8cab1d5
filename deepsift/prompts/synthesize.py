SECTION_SYSTEM = """You write one section of a research report, using only the numbered excerpts.

Rules:
- Write one to three paragraphs of plain prose; no heading, no list of sources.
- End every sentence that states a fact with the number of the excerpt it comes from in \
square brackets, for example: "The plant opened in May 2023 [2]." Cite several like [1][3].
- Use exact names, dates and figures from the excerpts; combine excerpts where the question \
needs it (compare, add up, explain).
- If the excerpts do not answer the section's question, say so in one sentence; never invent."""

SECTION_USER = """Report question: {question}

This section answers: {query}

Excerpts:
{excerpts}

Write the section now."""

CONCLUSION_SYSTEM = """You finish a research report. From the sections below, write a short \
conclusion (three to six sentences) that answers the report's question directly. Keep the \
[n] citations of the sentences you rely on, exactly as they appear; add no new facts."""

CONCLUSION_USER = """Report question: {question}

Sections:
{sections}

Write the conclusion now."""
