"""Citation marks: "[n]" cites excerpt or source n; a model may also write "[n, m]"."""

import re
from collections.abc import Iterable

# One mark as written; group 1: its numbers.
MARK = re.compile(r"\[(\d+(?:\s*[,;]\s*\d+)*)\]")
_WITH_SPACE = re.compile(rf"\s*{MARK.pattern}")


def mark(number: int) -> str:
    return f"[{number}]"


def mark_all(numbers: Iterable[int]) -> str:
    """Marks side by side: "[1][3]"."""
    return "".join(mark(n) for n in numbers)


def numbers_of(mark_numbers: str) -> list[int]:
    """The numbers of one mark, from its group 1: "1, 3" -> [1, 3]."""
    return [int(n) for n in re.split(r"[,;]", mark_numbers)]


def cited(text: str) -> list[int]:
    """Every number that the marks in `text` cite, in order."""
    return [n for found in MARK.findall(text) for n in numbers_of(found)]


def without_marks(text: str, replacement: str = "") -> str:
    """`text` with each mark, and the space before it, replaced."""
    return _WITH_SPACE.sub(replacement, text)
