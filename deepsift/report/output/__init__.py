"""What the reader gets: [n] citations resolved against the excerpts shown, the Sources and Notes,
the Documents table from the documents' own facts, the report's headings in its language, and
the file it is written to (Markdown, HTML, PDF, DOCX).

May import the evidence stage (document names), records, errors and text.
"""
