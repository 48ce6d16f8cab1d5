"""References between documents, followed with no model call: a passage that says "as RFC 2025
proposed" or "see PEP 484" leads to the document the collection files under that number
(`2025-nested-method-calls.md`, `pep-0484.rst`), as a hyperlink would. The index is the
stored documents' own paths, so it is exactly as current as their chunks.
"""

import re
from pathlib import PurePath

# A name and a number: "RFC 2025", "RFC #1859", "PEP-484", "Issue 43"; not a version
# ("Rust 1.0", "Python 3.12").
_REFERENCE = re.compile(r"\b[A-Z][A-Za-z]{1,9}[\s-]?#?(\d{1,6})\b(?![.,]\d)")
# A file filed under a number: it starts with it, or with a short word and then it
# ("2025-nested-method-calls.md", "pep-0484.rst", "ADR-0012 use postgres.md").
_FILED = re.compile(r"^(?:[A-Za-z]{1,5}[-_ ]?)?0*(\d+)(?:[-_ .]|$)")


def referenced_numbers(text: str, question: str) -> list[str]:
    """The numbers `text` refers to documents by, in order, without leading zeros; not those
    the question itself holds (its own search looks for them already)."""
    asked = {n.lstrip("0") for n in re.findall(r"\d+", question)}
    numbers = (n.lstrip("0") or "0" for n in _REFERENCE.findall(text))
    return [n for n in dict.fromkeys(numbers) if n not in asked]


def filed_under(source: str) -> str | None:
    """The number a document's file name files it under, if any."""
    found = _FILED.match(PurePath(source).name)
    return (found.group(1).lstrip("0") or "0") if found else None
