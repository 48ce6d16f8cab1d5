"""The words of a text that carry its meaning, compared in any of their forms, and weighted by
how few texts hold them: one stopword list and one stemmer for every rule that matches words
(query terms, evidence, follow-ups, checks, amounts).

The stopwords are English: the report's other languages have no list here, and the rules that
need one say so in the report's Notes (deepsift.report.checks.run). The stemmer is a word's
first five letters, as every rule had it, which meets "reduced" and "reduction" in any
language written with spaces; a Snowball stemmer per language was not measured against it.
"""

import math

from deepsift.text.words import words

STOPWORDS = frozenset(
    """a about after all also an and any are as at be been before being between both but by can
    could did do document documents does during each end first for from give given had has
    have he her his how i if in into is it its later less may might more most new no not of
    on one only or other our over own per report said same say says shall she should so some
    such tell than that the their them then there these they this those three to two under
    very was we were what when where whether which while who whom whose why will with within
    without would you your""".split()
)
STEM = 5  # letters of a word that stand for all its forms


def stem(word: str) -> str:
    """Crude, but enough to meet a word in another form ("reduced" / "reduction")."""
    return "".join(c for c in word.casefold() if c.isalnum() or c == "_")[:STEM]


def content_words(text: str) -> list[str]:
    """The text's words without stopwords or figures, case-folded, in order."""
    return [w for w in words(text.casefold()) if w not in STOPWORDS and not w[0].isdigit()]


def terms(text: str) -> set[str]:
    """The stems of the text's words of three letters or more that are not stopwords."""
    return {stem(w) for w in words(text.casefold()) if w not in STOPWORDS and len(w) > 2}


def rarity(wanted: set[str], bags: list[set[str]]) -> dict[str, float]:
    """Each wanted term's weight: the fewer of `bags` hold it, the more it tells them apart."""
    return {t: math.log((1 + len(bags)) / (1 + sum(t in bag for bag in bags))) for t in wanted}


def held_shares(wanted: set[str], bags: list[set[str]]) -> list[float]:
    """Each bag's share of the wanted terms, weighted by their rarity among the bags."""
    weight = rarity(wanted, bags)
    whole = sum(weight.values()) or 1.0
    return [sum(weight[t] for t in wanted & bag) / whole for bag in bags]
