"""Figures in text, each read once here with one table of scales: numbers by value at the
precision written ("€4.7m" = "4.7 million" = "4,700,000"), sums of money with their currency,
and the amounts a sentence states (money, percentages, measures; not years or numbers in
names)."""

import math
import re

from deepsift.text.marks import without_marks

SCALES = {
    "k": 1e3,
    "thousand": 1e3,
    "m": 1e6,
    "mn": 1e6,
    "million": 1e6,
    "millions": 1e6,
    "b": 1e9,
    "bn": 1e9,
    "billion": 1e9,
    "billions": 1e9,
    "tn": 1e12,
    "trillion": 1e12,
}
_SCALE = "|".join(sorted(SCALES, key=len, reverse=True))
NUMBER = re.compile(
    r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?(?:\s?(" + _SCALE + r")\b)?",
    re.IGNORECASE,
)
# A scale given as the unit of a table or a list ("€ million", "EUR million", "(£bn)"): the
# bare numbers under it are in that scale.
UNIT = re.compile(
    r"(?<![\d.,]\s)(?<![\d.,])(?:€|\$|£|EUR|USD|GBP)\s?(" + _SCALE + r")\b", re.IGNORECASE
)
CURRENCIES = {"€": "EUR", "$": "USD", "£": "GBP"}
# A sum of money as written: "EUR 29.3 million", "€4.7m", "$120k".
MONEY = re.compile(
    r"(?P<currency>€|EUR|\$|USD|£|GBP)\s?(?P<number>\d[\d,]*(?:\.\d+)?)"
    r"(?:\s?(?P<scale>million|billion|thousand|bn|m|k)\b)?"
)
# Figures that are amounts (money, percentages, measures), not years or numbers in names.
# ("%" stands outside the closing \b, which "40% rise" would fail.)
AMOUNT = re.compile(
    r"(?:[€$£]\s?\d[\d,.]*(?:\s?(?:k|m|bn|million|billion|thousand))?"
    r"|\b\d[\d,.]*\s?(?:%|(?:percent|per cent|million|billion|thousand|tonnes?|t/yr|t|km|ha|"
    r"kg|µg/l|ug/l|mg/l|mg|µg|micrograms?|milligrams?|days|weeks|months|years|votes)\b)"
    r"|\b(?:eur|usd|gbp)\s?\d[\d,.]*(?:\s?(?:million|billion|thousand|m|bn))?)",
    re.IGNORECASE,
)


def numbers(text: str) -> list[tuple[float, float]]:
    """Each number in `text` as (value, half its last written digit: the rounding it allows);
    one too long for a float (over 300 digits) is not checked."""
    found = []
    for whole, decimals, scale in NUMBER.findall(without_marks(text, " ")):
        factor = SCALES[scale.lower()] if scale else 1.0
        value = float(whole.replace(",", "") + (f".{decimals}" if decimals else "")) * factor
        if math.isfinite(value):
            found.append((value, 0.5 * factor / 10 ** len(decimals)))
    return found


def money(match: re.Match) -> tuple[float, str]:
    """A MONEY match's value and currency code."""
    scale = SCALES[match["scale"].lower()] if match["scale"] else 1.0
    value = float(match["number"].replace(",", "")) * scale
    return value, CURRENCIES.get(match["currency"], match["currency"])
