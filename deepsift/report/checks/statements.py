"""The checks a reader would make of a report's sentences, in code (the claim check of figures
and names is deepsift.report.checks.claims): a sentence that says again what another says, one that
joins figures from two different excerpt sentences into one claim, a claim its excerpts do not
support, a cause no excerpt states, and a source described as what it is not. Each returns the
problem in words the rewrite is told, or "" when the sentence passes.

A figure in a sentence must stand where its excerpts put it, not only somewhere in them: two
figures joined as one claim must come from one excerpt sentence, and a figure given to a cause
must be that cause's in the excerpts, not a whole they split among several causes."""

import re

from deepsift.text.amounts import AMOUNT, numbers
from deepsift.text.marks import without_marks
from deepsift.text.sentences import split_sentences
from deepsift.text.terms import content_words, stem
from deepsift.text.words import words

REPEATED = 0.8  # of a sentence's words in one other sentence: it says the same again
LEAST_WORDS = 6  # shorter sentences are not compared
SUPPORTED = 0.5  # of a claim's content words its excerpts must hold
CONTENT_LEAST = 4  # a claim with fewer content words (beyond the question's) is not judged

# Words that set two figures side by side on purpose.
_CONTRAST = re.compile(
    r"(?i)\b(compared|against|than|versus|vs|while|whereas|but|from .{1,40}? to|up from|"
    r"down from|rather than|instead of|exceed\w*|over)\b"
)
_CAUSAL = re.compile(
    r"(?i)\b(because|caused by|cause[ds]?|due to|owing to|as a result|result(?:ed|s)? in|"
    r"led to|leads to|lead to|thanks to|blamed|responsible for|so that|therefore|hence|why)\b"
)
# Words that make one figure another, or its cause, rather than set it beside it.
_LINKED = re.compile(
    _CAUSAL.pattern
    + r"|\b(equivalent|equals?|equal to|amounts? to|correspond\w* to|translat\w* into|"
    r"which means|meaning)\b"
)
# Where a list of causes or shares breaks into its items.
_ITEM = re.compile(r"[,;:]\s+|\s+(?:and|or)\s+")
# "The incident report stated ...", "RFC 2394 proposes ...": a source named as saying something.
_ATTRIBUTION = re.compile(
    r"(?i)\b(?:the\s+)?((?:[\w-]+\s+){0,3}?"
    r"(report|study|note|minutes|review|release|register|paper|memo|plan|survey|article|"
    r"(?-i:[A-Z]{2,5})))"  # or a kind named by its acronym, as identifiers are ("RFC 2394")
    r"(?:\s+\d+)?\s+(?:stated|states|says|said|notes|noted|reports|reported|found|finds|"
    r"concluded|concludes|proposes|proposed|describes|described|recommends|recommended|shows|"
    r"showed)\b"
)


def repeated(sentence: str, earlier: list[str]) -> str:
    """A sentence at least LEAST_WORDS long with REPEATED of its words in one `earlier`
    sentence."""
    mine = _bag(sentence)
    if len(mine) < LEAST_WORDS:
        return ""
    for other in earlier:
        if len(mine & _bag(other)) >= REPEATED * len(mine):
            return "it says again what another sentence of the report says"
    return ""


def said_again(sentence: str, others: list[str]) -> str:
    """`repeated` either way round: a short sentence said again inside a longer one counts."""
    if repeated(sentence, others) or any(repeated(other, [sentence]) for other in others):
        return "it says again what another sentence of the report says"
    return ""


def stitched(sentence: str, evidence: list[str]) -> str:
    """Amounts that no one evidence sentence holds together, joined without saying they are
    set side by side ("cost EUR 24.6 million, including a 25-year loan"), or joined as one
    being the other or its cause ("12.5 t a year, equivalent to 60 micrograms per litre"),
    which setting them side by side does not excuse."""
    amounts = AMOUNT.findall(without_marks(sentence, " "))
    if len(amounts) < 2 or (_CONTRAST.search(sentence) and not _LINKED.search(sentence)):
        return ""
    values = [v for v, _ in numbers(" ".join(amounts))]
    held = [{v for v, _ in numbers(text)} for text in _sentences(evidence)]
    holding = [h for h in held if h & set(values)]
    if len(holding) < 2 or any(set(values) <= h for h in holding):
        return ""
    return "it joins figures from different sentences of its excerpts into one claim"


def unsupported_claim(sentence: str, evidence: list[str], question: str) -> str:
    """A sentence with no figure whose content words its excerpts (and the question) mostly do
    not hold ("creating thousands of jobs")."""
    if numbers(sentence):
        return ""  # the claim check holds a sentence with figures to them
    held = {stem(w) for text in [*evidence, question] for w in content_words(text)}
    said = [
        w
        for w in content_words(sentence)
        if stem(w) not in {stem(q) for q in content_words(question)}
    ]
    if len(said) < CONTENT_LEAST:
        return ""
    found = sum(stem(w) in held for w in said)
    if found >= SUPPORTED * len(said):
        return ""
    missing = [w for w in said if stem(w) not in held][:4]
    return f"its excerpts do not say this: {', '.join(missing)}"


def wrong_comparison(sentence: str) -> str:
    """Two amounts compared the wrong way round ("EUR 29.3 million was within the approved
    budget of EUR 24.6 million")."""
    said = without_marks(sentence, " ")
    for first, word, second in _COMPARISON.findall(said):
        a, b = numbers(first), numbers(second)
        if not a or not b:
            continue
        smaller = word.casefold().split()[0] in _SMALLER
        if (a[0][0] > b[0][0]) if smaller else (a[0][0] < b[0][0]):
            return f"its figures do not compare that way: {first.strip()} {word} {second.strip()}"
    return ""


_SMALLER = {"within", "under", "below", "less", "lower", "cheaper", "fewer"}
_COMPARISON = re.compile(
    r"(" + AMOUNT.pattern + r")[^.;]{0,60}?\b(within|under|below|less than|lower than|"
    r"cheaper than|fewer than|over|above|more than|higher than|exceed\w*)\b[^.;\d€$£]{0,60}?("
    + AMOUNT.pattern
    + r")",
    re.IGNORECASE,
)


def unstated_cause(sentence: str, evidence: list[str]) -> str:
    """A cause ("because", "caused by", "led to") that none of its excerpts states, or a
    figure given to a cause that its excerpts do not give it (`_misattributed`)."""
    if not _CAUSAL.search(sentence):
        return ""
    if not any(_CAUSAL.search(text) for text in evidence):
        return "its excerpts state no cause"
    return _misattributed(sentence, evidence)


def _misattributed(sentence: str, evidence: list[str]) -> str:
    """The cause word splits `sentence` in two: the side with the figures and the side they
    are tied to (the cause, or the effect: "lightning caused a 40% rise"). It passes when one
    excerpt sentence holds that side's content words with the figures, or holds them with what
    the figures measure ("the overrun came from ...") without giving the side only its own
    share of the whole (`_one_share`)."""
    said = without_marks(sentence, " ")
    cause = _CAUSAL.search(said)
    sides = [said[: cause.start()], said[cause.end() :]]
    figured = [bool(AMOUNT.search(side)) for side in sides]
    if figured.count(True) != 1:
        return ""  # no figure, or figures on both sides: `stitched` holds those to one sentence
    measure, tied = sides if figured[0] else sides[::-1]
    figures = AMOUNT.findall(measure)
    values = {v for v, _ in numbers(" ".join(figures))}
    tied_words, measured = _stems(tied), _stems(AMOUNT.sub(" ", measure))
    if not values or not tied_words:
        return ""  # "this led to ...": nothing to look for
    stating = [t for t in _sentences(evidence) if _holds(t, tied_words)]
    if any(values <= {v for v, _ in numbers(text)} for text in stating):
        return ""
    explaining = [text for text in stating if _holds(text, measured)]
    if not explaining:
        return (
            f"its excerpts do not tie {', '.join(figures)} to {' '.join(content_words(tied)[:4])}"
        )
    if all(_one_share(text, tied_words) for text in explaining):
        return f"its excerpts split {figures[0]} among several causes, each with its own figure"
    return ""


def _one_share(text: str, tied_words: set[str]) -> bool:
    """`text` lists items each with its own amount ("storm damage (EUR 2.1 million), redesign
    (EUR 1.6 million) and ..."), and `tied_words` name some of them, not all."""
    items = [item for item in _ITEM.split(text) if AMOUNT.search(item)]
    named = [item for item in items if tied_words & _stems(item)]
    return len(items) >= 2 and 0 < len(named) < len(items)


def misdescribed_source(sentence: str, documents: list[str]) -> str:
    """A source named as saying something ("the incident report stated ...", "RFC 2394
    proposes ...") whose describing words or number none of the documents the sentence cites
    has (`documents`: their titles and paths)."""
    named = _ATTRIBUTION.search(without_marks(sentence, " "))
    if not named or not documents:
        return ""
    described = " ".join(documents).casefold()
    held = {stem(w) for w in words(described)}
    modifiers = [w for w in content_words(named[1]) if stem(w) != stem(named[2])]
    number = re.search(r"\d+", named[0][named.end(1) - named.start(0) :])
    if (number and number[0] not in described) or any(stem(w) not in held for w in modifiers):
        return f"it names a source it does not cite: {named[0].strip()}"
    return ""


def _sentences(texts: list[str]) -> list[str]:
    return [s for text in texts for s in split_sentences(" ".join(text.split()))]


def _bag(sentence: str) -> set[str]:
    return {w.casefold() for w in words(without_marks(sentence, " "))}


def _stems(text: str) -> set[str]:
    return {stem(w) for w in content_words(text)}


def _holds(text: str, stems: set[str]) -> bool:
    """`text` has SUPPORTED of the `stems` (not judged on none: an empty set is not held)."""
    return bool(stems) and len(stems & _stems(text)) >= SUPPORTED * len(stems)
