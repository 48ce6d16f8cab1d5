"""Where one sentence ends and the next begins: the one rule for the report's sentences, the
chunker's windows and the report scorer."""

import re

# After ".", "!" or "?" (and its [n] marks, which go before the full stop), before a capital, a
# digit, a quote or a bracket; not after an initial or a title ("J. Smith", "Dr. Okonjo").
_END = re.compile(
    r"(?<=[.!?])(?<!\b[A-Z]\.)(?<!\bDr\.)(?<!\bMr\.)(?<!\bMs\.)(?<!\bMrs\.)(?<!\bSt\.)"
    r"(?<!\bNo\.)(?<!\bvs\.)\s+(?=[A-Z0-9\"“(])"
)


def split_sentences(text: str) -> list[str]:
    """`text` cut at each sentence's end; the space between two sentences goes, all else stays."""
    return _END.split(text)
