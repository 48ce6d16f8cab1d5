"""Prose held to a schema of cited sentences, and rendered with checked [n] marks."""

import re
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator

from deepsift.text.marks import mark_all, without_marks
from deepsift.text.sentences import split_sentences
from deepsift.text.untrusted import flat
from deepsift.text.words import words as words_of

# "..., as stated in the document examples/x.pdf." ending a sentence, or "..., as stated in the
# document x.pdf, which records the final cost.": small models name their source in prose (and
# copy what it is about) though told not to; the excerpts cite it, so the clause goes.
_NAMED_SOURCE = re.compile(
    r",?\s+as (?:stated|reported|noted|mentioned|described|indicated) in "
    r"(?:[^,;!?]*?|the document \S+, which [^;!?]*?)([.!?]?)$",
    re.IGNORECASE,
)

LOOP_WORDS = 6  # a sentence opening with an earlier one's first this many words is a loop (clean)
# A sentence of at least LOOP_WORDS words, this share of them in one earlier sentence, restates
# it: the embedded model ends a section on its first sentence again, its subject shortened.
RESTATED = 0.9


class CitedSentence(BaseModel):
    text: str
    excerpts: list[int]


def _complete(items: Any) -> Any:
    """A reply cut off by its token limit ends in a sentence without its excerpts (the JSON
    repair closes it): that sentence is left out and the ones before it are kept."""
    if not isinstance(items, list):
        return items
    return [i for i in items if not isinstance(i, dict) or {"text", "excerpts"} <= i.keys()]


Sentences = Annotated[list[CitedSentence], BeforeValidator(_complete)]


class CitedText(BaseModel):
    """Prose as sentences, each carrying the excerpt numbers it rests on: even a small model
    held to this schema cites every claim, which free text does not get from it."""

    sentences: Sentences

    def render(self, citable: set[int] | None = None) -> str:
        """Sentences with their [n] marks; numbers outside `citable` (when given) are dropped."""
        return render(self.sentences, citable)


class Answered(BaseModel):
    """A section's answer to its part, and the evidence sentences it was asked to restate, one
    for each, in order: their citations are the evidence's own, so the model cannot miscount
    them."""

    answer: str = ""
    sentences: list[str] = []


class ReportFrame(BaseModel):
    """What the report says around its sections: a title, the parts as headings and the
    conclusion. A reply cut off by its token limit keeps what it got to (the lists default to
    empty)."""

    title: str
    headings: list[str] = []
    conclusion: Sentences = []


def clean(sentences: list[CitedSentence], citable: set[int] | None = None) -> list[CitedSentence]:
    """Sentences as the report keeps them, one to a text and each on one line: marks the model
    wrote into the text removed (only `excerpts` cite), numbers outside `citable` (when given)
    dropped, empty and repeated sentences left out, and so are those that open with an earlier
    one's first LOOP_WORDS words (small models loop: "The project was also built to address …"
    over every item of an excerpt's list, true or not) and those that restate one (RESTATED)."""
    seen: set[str] = set()
    said: list[set[str]] = []  # each kept sentence's words
    kept = []
    for sentence in _one_each(sentences):
        # One line, without hidden characters a document may have lent it: a sentence cannot
        # start a heading or a list (a Sources list) of its own.
        text = flat(without_marks(sentence.text))
        text = _NAMED_SOURCE.sub(r"\1", text)
        words = text.casefold().split()
        opening = " ".join(words[:LOOP_WORDS]) if len(words) > LOOP_WORDS else text
        bag = set(words_of(text.casefold()))
        if not text or text in seen or opening in seen or _restates(bag, said):
            continue
        seen.update((text, opening))
        said.append(bag)
        numbers = [n for n in dict.fromkeys(sentence.excerpts) if citable is None or n in citable]
        kept.append(CitedSentence(text=text, excerpts=numbers))
    return kept


def _restates(words: set[str], said: list[set[str]]) -> bool:
    return len(words) >= LOOP_WORDS and any(
        len(words & earlier) >= RESTATED * len(words) for earlier in said
    )


def _one_each(sentences: list[CitedSentence]) -> list[CitedSentence]:
    """Each text of several sentences as that many, citing its excerpts: a small model packs a
    paragraph into one text, and the claim check and the loop filter work a sentence at a time."""
    return [
        CitedSentence(text=part, excerpts=sentence.excerpts)
        for sentence in sentences
        for part in split_sentences(sentence.text)
    ]


def with_marks(sentence: CitedSentence) -> str:
    """The sentence with its [n] marks before its full stop."""
    text = sentence.text
    marks = mark_all(sentence.excerpts)
    if text.endswith((".", "!", "?")) and marks:
        return f"{text[:-1]} {marks}{text[-1]}"
    return f"{text} {marks}" if marks else text


def render(sentences: list[CitedSentence], citable: set[int] | None = None) -> str:
    return " ".join(with_marks(s) for s in clean(sentences, citable))
