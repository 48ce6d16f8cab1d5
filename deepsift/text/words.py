"""What counts as a word, wherever words are counted, compared or checked: letters and digits,
with the apostrophes, hyphens, points and commas inside them ("Kestrel-Works", "29.3",
"4,700,000", "A320", "don't" are one word each)."""

import re
import string

_WORD = re.compile(r"[^\W_](?:[\w'’.,-]*[^\W_])?")


def words(text: str) -> list[str]:
    return _WORD.findall(text)


def normalize_answer(text: str) -> str:
    """A short answer as answers are compared: lowercased, without punctuation and articles,
    spaces squeezed (the SQuAD normalisation)."""
    text = "".join(ch for ch in text.lower() if ch not in _PUNCTUATION)
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


_PUNCTUATION = set(string.punctuation)
