"""Whether a follow-up's answer answers what was asked: the questions asked together ("Which
option …, and which macro …?"), each answered by a sentence of the answer or named as not
answered, and a figure of the kind asked where one is ("which 1.x release": a version number)."""

import re

from deepsift.report.writing.cited_text import CitedSentence
from deepsift.text.asks import ASKS_COUNT, ASKS_VERSION, asks_figure
from deepsift.text.terms import terms

_FIGURE = re.compile(
    r"\d+(?:\.\d+)?|(?i:\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
    r"twenty|thirty|forty|fifty|hundred|thousand|million|once|twice|annual\w*|yearly|monthly|"
    r"weekly|daily)\b)"
)
# Two questions asked as one: "Which option …, and which macro …?"
_ANOTHER_QUESTION = re.compile(
    r"(?i)[,;]?\s+and\s+(?=(?:who|whom|whose|what|which|when|where|why|how)\b)"
)


def question_parts(question: str) -> list[str]:
    """The questions `question` asks together: "Which option …, and which macro …?" is two."""
    pieces = [p.strip(" ,;") for p in _ANOTHER_QUESTION.split(question) if p.strip(" ,;?")]
    return [p if p.endswith("?") else f"{p}?" for p in pieces] if len(pieces) > 1 else [question]


def unanswered(parts: list[str], said: list[CitedSentence]) -> list[str]:
    """The parts of the question the answer leaves out. Each sentence answers the part whose
    own words (none of the other parts') it holds, else the first part still open, in the
    question's order ("Brannock Civil Engineering Ltd" answers which company won the contract,
    and holds none of its words); a part that asks for a figure needs a sentence with one."""
    words = [terms(part) - {t for o in parts if o != part for t in terms(o)} for part in parts]
    open_parts = list(range(len(parts)))
    for sentence in said:
        held = [n for n in open_parts if words[n] & terms(sentence.text)]
        fits = [n for n in held or open_parts if answers(parts[n], [sentence])]
        if fits:
            open_parts.remove(fits[0])
    return [parts[n] for n in open_parts]


def not_answered(part: str) -> CitedSentence:
    """A part of the question the answer leaves out, named: “Which checksum …?”"""
    return CitedSentence(
        text=f"The documents do not answer “{part[0].upper()}{part[1:]}”", excerpts=[]
    )


def answers(question: str, said: list[CitedSentence]) -> bool:
    """Whether `said` may answer `question`: something is said, and a question that asks for a
    figure (how many, which version, when) gets one of that kind that it did not give itself:
    a version number for "which 1.x release", not a year; a count, not a year. A small model
    answers an unanswerable question with a near sentence ("its first edition in 2018" for
    "which 1.x release?") rather than say that nothing answers it."""
    if not said:
        return False
    if not asks_figure(question):
        return True
    given = {f.casefold() for f in _FIGURE.findall(question)}
    figures = {f.casefold() for s in said for f in _FIGURE.findall(s.text)} - given
    if ASKS_VERSION.search(question):  # "which 1.x release": a version number, not a year
        return any(re.fullmatch(r"\d+\.\d+", f) for f in figures)
    if ASKS_COUNT.search(question):  # "how many": a year is no count
        figures = {f for f in figures if not re.fullmatch(r"(?:19|20)\d\d", f)}
    return bool(figures)
