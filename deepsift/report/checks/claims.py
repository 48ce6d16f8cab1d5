"""The claim check, without a model: the numbers, amounts, dates and proper names a sentence
states must appear in the excerpts it cites.

Numbers compare by value at the precision written ("€4.7m" = "4.7 million" = "4,700,000", and
"4.7 million" also stands for 4,712,000 rounded); names compare case- and punctuation-folded.
Text the question already holds passes, so a sentence may restate what was asked.
"""

import unicodedata
from collections.abc import Callable

from pydantic import BaseModel

from deepsift.report.writing.cited_text import CitedSentence
from deepsift.text.amounts import SCALES, UNIT, numbers
from deepsift.text.marks import without_marks
from deepsift.text.words import words


def names(text: str) -> list[str]:
    """Proper names and codes: capitalised words past a sentence's first word, and words mixing
    letters and digits ("A320"), folded."""
    picked = []
    for n, word in enumerate(words(without_marks(text, " "))):
        has_digit = any(c.isdigit() for c in word)
        if (n > 0 and word[0].isupper()) or (has_digit and not word[0].isdigit()):
            picked.append(_fold(word))
    return picked


def unsupported(sentence: str, evidence: list[str], check_names: bool = True) -> list[str]:
    """What `sentence` states that no text in `evidence` holds; [] when it all checks out."""
    held_values = [value for text in evidence for value in _held_values(text)]
    held_words = {_fold(w) for text in evidence for w in words(text)}
    stated = numbers(sentence)

    def held(value: float, tolerance: float, among: list[float]) -> bool:
        return any(abs(value - h) <= tolerance + 1e-9 * abs(h) for h in among)

    # A figure the sentence works out from two of its own held figures (their difference, or
    # that as a percentage of one) is held too: deepsift.report.evidence.amounts writes such
    # sentences.
    own = [value for value, tolerance in stated if held(value, tolerance, held_values)]
    worked = [abs(a - b) for a in own for b in own if a != b]
    worked += [100 * abs(a - b) / b for a in own for b in own if a != b and b]
    missing = [
        _written(value)
        for value, tolerance in stated
        if not held(value, tolerance, held_values) and not held(value, tolerance, worked)
    ]
    if check_names:
        missing += [name for name in names(sentence) if not _held(name, held_words)]
    return missing


def _held_values(text: str) -> list[float]:
    """The numbers `text` holds, and at the scale of any unit it names ("€ million": 22.8 is
    22,800,000)."""
    values = [value for value, _ in numbers(text)]
    scales = {SCALES[scale.lower()] for scale in UNIT.findall(text)}
    return values + [value * scale for scale in scales for value in values]


def _held(name: str, words: set[str]) -> bool:
    """A name is held when the evidence has it, or each of its hyphenated parts."""
    return name in words or all(part in words for part in name.split("-") if part)


def _fold(word: str) -> str:
    word = unicodedata.normalize("NFKC", word).casefold().replace("’", "'")
    return word.removesuffix("'s").strip(".'-")


def _written(value: float) -> str:
    if value != int(value):
        return f"{value:,}"
    return f"{value:,.0f}" if value >= 10_000 else str(int(value))  # 2022, not 2,022


class ClaimCounts(BaseModel):
    checked: int = 0  # sentences that state a number or a name
    rewritten: int = 0  # failed a check, and passed once rewritten from their excerpts
    dropped: int = 0  # failed it again, or could not be rewritten
    dropped_for: list[str] = []  # the problem each dropped sentence had


# The failed sentences, each with its problem in words -> their rewrites, in order (None: none).
Rewriter = Callable[[list[tuple[CitedSentence, str]]], list[CitedSentence] | None]
# A sentence's problem beyond its figures and names (deepsift.report.checks.statements); ""
# when none.
Faults = Callable[[CitedSentence], str]


def hold_to_evidence(
    sentences: list[CitedSentence],
    excerpts: dict[int, str],
    restated: str,
    rewrite: Rewriter | None,
    check_names: bool = True,
    faults: Faults | None = None,
) -> tuple[list[CitedSentence | None], ClaimCounts]:
    """The sentences, each kept when its cited `excerpts` (number -> text) or the `restated`
    text (the question) hold its numbers and names, and `faults` finds nothing wrong with it.
    One that cites the wrong excerpts (small models miscount) is kept citing those that do hold
    them. The others go once to `rewrite` with their problem (None: no rewrite, e.g. no budget
    left); a rewritten sentence that fails again, or is not returned, is dropped: None in its
    place."""

    def lacking(sentence: CitedSentence) -> list[str]:
        evidence = [excerpts[n] for n in sentence.excerpts if n in excerpts] + [restated]
        return unsupported(sentence.text, evidence, check_names)

    def problem(sentence: CitedSentence) -> str:
        if missing := lacking(sentence):
            return f"not in its excerpts: {', '.join(missing)}"
        return faults(sentence) if faults else ""

    counts = ClaimCounts()
    sentences = list(sentences)
    failed: dict[int, str] = {}
    for i, sentence in enumerate(sentences):
        if numbers(sentence.text) or (check_names and names(sentence.text)):
            counts.checked += 1
            if (missing := lacking(sentence)) and (
                recited := _recited(sentence, missing, excerpts, lacking)
            ):
                sentences[i] = recited
        if wrong := problem(sentences[i]):
            failed[i] = wrong
    if not failed:
        return list(sentences), counts
    rewritten = (rewrite([(sentences[i], failed[i]) for i in failed]) or []) if rewrite else []
    replacement = dict(zip(failed, rewritten, strict=False))
    kept: list[CitedSentence | None] = []
    for i, sentence in enumerate(sentences):
        if i not in failed:
            kept.append(sentence)
        elif (new := replacement.get(i)) and new.text.strip() and not problem(new):
            kept.append(new)
            counts.rewritten += 1
        else:
            kept.append(None)
            counts.dropped += 1
            counts.dropped_for.append(failed[i])
    return kept, counts


def _recited(
    sentence: CitedSentence,
    missing: list[str],
    excerpts: dict[int, str],
    lacking: Callable[[CitedSentence], list[str]],
) -> CitedSentence | None:
    """`sentence` citing, besides its own, the excerpts that hold what it lacks; None when
    those excerpts together do not hold all of it."""
    holding = [n for n, text in excerpts.items() if not set(missing) <= set(_lacks(text, missing))]
    for n in sorted(holding, key=lambda n: len(_lacks(excerpts[n], missing))):
        sentence = sentence.model_copy(update={"excerpts": [*sentence.excerpts, n]})
        if not lacking(sentence):
            return sentence
    return None


def _lacks(text: str, missing: list[str]) -> list[str]:
    """Which of the `missing` items (as unsupported() names them) `text` does not hold."""
    held = {_written(value) for value in _held_values(text)} | {_fold(w) for w in words(text)}
    return [item for item in missing if item not in held]
