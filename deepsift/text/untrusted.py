"""Text from documents and web pages, made safe to show: to the model, inside quote markers it
cannot close or leave; to the reader, without characters that hide or reorder what is shown."""

import re
import unicodedata

# Characters that show nothing or reorder what is shown: bidi embeddings, overrides and
# isolates, zero-width space, word joiner, BOM, the tag characters that can spell hidden ASCII,
# and the variation selectors beyond emoji's. ZWJ, ZWNJ and the LRM/RLM marks stay: scripts
# and emoji need them.
_HIDDEN = re.compile(
    "[\u202a-\u202e\u2066-\u2069\u200b\u2060-\u2064\ufeff\u180e"
    "\U000e0000-\U000e007f\U000e0100-\U000e01ef\x00-\x08\x0b\x0c\x0e-\x1f\x7f]"
)
# Look-alikes that NFKC keeps apart from the characters of a marker.
_LOOKALIKE = str.maketrans(
    {
        **dict.fromkeys("‹〈⟨〈《ᐸ", "<"),
        **dict.fromkeys("›〉⟩〉》ᐳ", ">"),
        **dict.fromkeys("∕⁄⧸╱", "/"),
        **dict(zip("есхртεχρτϲ", "ecxptexptc", strict=True)),  # Cyrillic and Greek
    }
)
# A quote marker in any spelling (no `>`, entities, spaces), and the special tokens of chat
# formats and of Search-o1 (`<|im_end|>`, `<|end_search_result|>`), which a server may read as
# the real ones: matched on the folded text.
_MARKER = re.compile(
    r"(?:<|&lt;?|&#0*60;?|&#x0*3c;?)\s*/?\s*excerpt(?:[^<>\n]{0,40}(?:>|&gt;?))?"
    r"|<\|[^|<>\s]{1,40}\|>",
)


def visible(text: str) -> str:
    """`text` without the characters that hide or reorder what is shown."""
    return _HIDDEN.sub("", text)


def flat(text: str) -> str:
    """Visible `text` on one line: shown outside a quote, it cannot start a line of its own (a
    heading, a list item)."""
    return " ".join(visible(text).split())


def as_data(text: str) -> str:
    """Visible `text` without anything a model could read as a quote marker or a special
    token, however it is spelled; removed until none is left (removing one can join another)."""
    text = visible(text)
    while True:
        folded, origin = _folded(text)
        spans = [(origin[m.start()], origin[m.end() - 1] + 1) for m in _MARKER.finditer(folded)]
        if not spans:
            return text
        kept, start = [], 0
        for begin, end in spans:
            kept.append(text[start:begin])
            start = end
        text = "".join(kept) + text[start:]


def one_line(text: str, limit: int = 200) -> str:
    """`text` as data on one line, at most `limit` characters: a title or a path shown outside
    the quote markers cannot start a line of its own."""
    line = " ".join(as_data(text).split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def _folded(text: str) -> tuple[str, list[int]]:
    """`text` NFKC-normalised, case-folded, look-alikes mapped and invisible characters left
    out, with the index in `text` of each folded character."""
    if text.isascii():
        return text.lower(), list(range(len(text)))
    chars: list[str] = []
    origin: list[int] = []
    for i, char in enumerate(text):
        if unicodedata.category(char) == "Cf":
            continue
        for folded in unicodedata.normalize("NFKC", char).casefold().translate(_LOOKALIKE):
            chars.append(folded)
            origin.append(i)
    return "".join(chars), origin
