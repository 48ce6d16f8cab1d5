"""What a question or a part of one asks for: a figure (an amount, a count, a date, a version),
read from its wording."""

import re

# A question whose answer is a figure: "how many", "which version", "when was".
_FIGURE_ANSWER = (
    r"how (?:many|much|long|often|far|old)|what (?:number|version|year|percentage|share)|"
    r"which (?:[a-z]+ )?(?:version|release|year|epoch|block|date|day)|in what year|^\s*when|"
    r"what (?:time|date|day|epoch|block)\b|"
    r"when (?:was|were|did|is|will)"
)
ASKS_FIGURE = re.compile(rf"(?i)\b(?:{_FIGURE_ANSWER})\b")
# A subject told in figures: an amount, a date or a change ("the cost", "did it reduce").
_FIGURE_SUBJECT = re.compile(
    rf"(?i)\b(?:{_FIGURE_ANSWER}|cost|budget|price|spend|percent|rate|level|amount|number|when|"
    r"year|date|increase|decrease|reduce|fall|rise|compare)"
)
ASKS_VERSION = re.compile(r"(?i)\b\d+\.x\b|\bversion number")
ASKS_COUNT = re.compile(r"(?i)\bhow (?:many|much)\b")


def asks_figure(question: str) -> bool:
    """Whether the answer to `question` is a figure."""
    return bool(ASKS_FIGURE.search(question))


def about_figures(part: str) -> bool:
    """Whether a part asks for an amount, a date or a change: its evidence holds figures."""
    return bool(_FIGURE_SUBJECT.search(part))
