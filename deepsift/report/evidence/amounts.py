"""A part of the question that sets two amounts against each other ("what did it cost compared
with its approved budget"): each amount found in the excerpts beside its own word, and the
difference between them computed here, not by the model."""

import re

from deepsift.records import Chunk
from deepsift.report.evidence.sentences import sentences_of
from deepsift.report.writing.cited_text import CitedSentence
from deepsift.text.amounts import MONEY, SCALES, money
from deepsift.text.asks import ASKS_COUNT
from deepsift.text.terms import STOPWORDS, stem
from deepsift.text.words import words

_COMPARES = re.compile(
    r"(?i)^(?P<a>.+?)\s+(?:compared (?:to|with)|against|versus|vs\.?|relative to)\s+(?P<b>.+)$"
)
_WORDS_APART = 8  # at most, between an amount and the word that says what it is
# Words beside an amount that say it was not what came to pass.
_UNREALISED = re.compile(r"(?i)\b(estimat\w*|would|could|might|expected|forecast\w*|if)\b")


def compared_amounts(part: str) -> tuple[list[str], list[str]] | None:
    """The words of each side of a comparing part ("cost", "end" | "approved", "budget"), or
    None when the part compares nothing."""
    match = _COMPARES.match(part.strip().rstrip("?."))
    if not match:
        return None
    a, b = (  # "how much", "how many": what is asked, not what the amount is
        [
            w
            for w in words(ASKS_COUNT.sub(" ", side).casefold())
            if w not in STOPWORDS and len(w) > 2
        ]
        for side in (match["a"], match["b"])
    )
    return (a, b) if a and b else None


def comparison(
    sides: tuple[list[str], list[str]], chunks: list[Chunk], number: dict[str, int]
) -> CitedSentence | None:
    """ "The cost was EUR 29.3 million, against an approved budget of EUR 24.6 million: EUR 4.7
    million (19%) over it", citing where each amount stands; None unless both are found, in one
    currency. `chunks` in the order their evidence ranks, `number`: chunk id -> excerpt n."""
    found = [_amount(side, other, chunks) for side, other in (sides, sides[::-1])]
    if None in found:
        return None
    (a, currency, a_text, a_chunk), (b, other, b_text, b_chunk) = found
    if currency != other or a == b or a_chunk is None:
        return None
    difference = abs(a - b)
    share = round(100 * difference / b)
    way = "over" if a > b else "under"
    text = (
        f"The {sides[0][0]} was {a_text}, against {_article(sides[1])} {' '.join(sides[1])} of "
        f"{b_text}: {_written(difference, a_text)} ({share}%) {way} it."
    )
    return CitedSentence(
        text=text, excerpts=list(dict.fromkeys([number[a_chunk.id], number[b_chunk.id]]))
    )


def _amount(side: list[str], other: list[str], chunks: list[Chunk]):
    """The first amount in the excerpts' sentences that stands within _WORDS_APART words of one
    of `side`'s words, nearer them than `other`'s, and not in a sentence of what might have
    been: (value, currency, as written, its chunk)."""
    stems = {stem(w) for w in side}
    others = {stem(w) for w in other} - stems
    for chunk in chunks:
        for sentence in sentences_of(chunk):
            if _UNREALISED.search(sentence):
                continue
            said = sentence.split()
            near = [i for i, w in enumerate(said) if stem(w) in stems]
            far = [i for i, w in enumerate(said) if stem(w) in others]
            for match in MONEY.finditer(sentence):
                at = len(sentence[: match.start()].split())
                mine = min((abs(at - i) for i in near), default=99)
                theirs = min((abs(at - i) for i in far), default=99)
                if mine <= _WORDS_APART and mine < theirs:
                    return *money(match), match[0], chunk
    return None


def _article(side: list[str]) -> str:
    return "an" if side[0][:1] in "aeiou" else "a"


def _written(value: float, like: str) -> str:
    """`value` written as the amount `like` is ("EUR 29.3 million" -> "EUR 4.7 million")."""
    match = MONEY.match(like)
    scale = match["scale"] or ""
    shown = value / (SCALES[scale.lower()] if scale else 1.0)
    figure = f"{shown:,.1f}".removesuffix(".0") if scale else f"{shown:,.0f}"
    gap = " " if like[len(match["currency"]) : len(match["currency"]) + 1] == " " else ""
    return f"{match['currency']}{gap}{figure}" + (f" {scale}" if scale else "")
