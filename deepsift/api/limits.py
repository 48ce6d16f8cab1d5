"""The limits every way in shares: the command line, the web app, MCP and the Python API."""

from deepsift.errors import UserError

MAX_QUESTION_CHARS = 4_000  # a question, not a document: a document is ingested


def check_question(question: str) -> None:
    """Refuse a question over MAX_QUESTION_CHARS, before anything is opened or kept."""
    if len(question) > MAX_QUESTION_CHARS:
        raise UserError(
            f"the question is {len(question):,} characters, over the {MAX_QUESTION_CHARS:,} "
            "a question may have: shorten it, or ingest the text and ask about it"
        )
