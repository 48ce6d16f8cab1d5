"""Prose held to a schema of cited sentences, and rendered with checked [n] marks."""

import re

from pydantic import BaseModel

_WRITTEN_MARKS = re.compile(r"\s*\[\d+(?:\s*[,;]\s*\d+)*\]")


class CitedSentence(BaseModel):
    text: str
    excerpts: list[int]


class CitedText(BaseModel):
    """Prose as sentences, each carrying the excerpt numbers it rests on: even a small model
    held to this schema cites every claim, which free text does not get from it."""

    sentences: list[CitedSentence]

    def render(self, citable: set[int] | None = None) -> str:
        """Sentences with their [n] marks; numbers outside `citable` (when given) are dropped."""
        seen: set[str] = set()
        rendered = []
        for sentence in self.sentences:
            # Marks the model wrote into the text itself are not checked: only `excerpts` cite.
            text = _WRITTEN_MARKS.sub("", sentence.text).strip()
            if not text or text in seen:  # small models loop; a repeated sentence adds nothing
                continue
            seen.add(text)
            numbers = [
                n for n in dict.fromkeys(sentence.excerpts) if citable is None or n in citable
            ]
            marks = "".join(f"[{n}]" for n in numbers)
            if text[-1] in ".!?" and marks:
                text = f"{text[:-1]} {marks}{text[-1]}"
            elif marks:
                text = f"{text} {marks}"
            rendered.append(text)
        return " ".join(rendered)
