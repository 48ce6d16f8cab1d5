"""Whether the figures and names a report's sentence states stand in the excerpts it cites, by
the grader's own reading (never deepsift.report.checks.claims, whose misses it must see).

A figure is held when an excerpt has its value at the precision written ("€29.3m" = "29.3
million" = "29,300,000"). A figure worked out from others (a difference, a share) is not held:
the reader cannot find it in what is cited. Names compare case-folded.

May import deepsift.text only.
"""

import re
import unicodedata

from deepsift.text.marks import without_marks
from deepsift.text.words import words

_SCALES = {
    "thousand": 1e3,
    "k": 1e3,
    "million": 1e6,
    "mn": 1e6,
    "m": 1e6,
    "billion": 1e9,
    "bn": 1e9,
    "b": 1e9,
    "trillion": 1e12,
    "tn": 1e12,
}
# A figure: digits (with thousands commas), decimals, a scale word or letter right after.
_FIGURE = re.compile(
    r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?"
    rf"(?:\s?({'|'.join(sorted(_SCALES, key=len, reverse=True))})\b)?",
    re.IGNORECASE,
)


def figures(text: str) -> list[tuple[str, float, float]]:
    """Each figure of `text` (citation marks aside) as (written, value, the rounding its
    written precision allows)."""
    found = []
    for figure in _FIGURE.finditer(without_marks(text, " ")):
        whole, decimals, scale = figure.groups(default="")
        factor = _SCALES[scale.casefold()] if scale else 1.0
        value = float(f"{whole.replace(',', '')}.{decimals or 0}") * factor
        found.append((figure[0], value, 0.5 * factor / 10 ** len(decimals)))
    return found


def names(text: str) -> list[str]:
    """Proper names and codes, folded: capitalised words after the first, and words that mix
    letters and digits ("A320")."""
    said = words(without_marks(text, " "))
    return [
        _fold(word)
        for n, word in enumerate(said)
        if (n > 0 and word[0].isupper())
        or (not word[0].isdigit() and any(c.isdigit() for c in word))
    ]


def unheld(sentence: str, evidence: list[str], check_names: bool = True) -> list[str]:
    """The figures (as written) and, with `check_names`, names of `sentence` that no text of
    `evidence` holds."""
    held_values = [value for text in evidence for _, value, _ in figures(text)]
    held_words = {_fold(w) for text in evidence for w in words(text)}
    missing = [
        written
        for written, value, rounding in figures(sentence)
        if not any(abs(value - h) <= rounding + 1e-9 * abs(h) for h in held_values)
    ]
    if check_names:
        missing += [
            name
            for name in names(sentence)
            if name not in held_words
            and not all(part in held_words for part in name.split("-") if part)
        ]
    return missing


def _fold(word: str) -> str:
    word = unicodedata.normalize("NFKC", word).casefold().replace("’", "'")
    return word.removesuffix("'s").strip(".'-,")
