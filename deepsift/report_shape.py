"""How long a report is (report_length) and the words of its fixed headings in its language."""

import re
from collections.abc import Mapping
from typing import Literal

from pydantic import BaseModel

Length = Literal["brief", "standard", "long"]
LENGTHS: tuple[Length, ...] = ("brief", "standard", "long")


class Shape(BaseModel):
    """A report length: its body's words (summary, sections and conclusion) and how they are
    shared out."""

    words: int
    sections: int  # at most; fewer when fewer sub-queries found evidence
    excerpts: int  # behind each section
    findings: int  # bullets of the summary
    depth: int = 1  # each sub-query's search returns this many times top_k chunks

    @property
    def summary_words(self) -> int:
        return self.words // 10

    @property
    def conclusion_words(self) -> int:
        return self.words // 10

    def section_words(self, sections: int) -> int:
        """Each section's share of the body, so the report keeps its length with fewer
        sections."""
        rest = self.words - self.summary_words - self.conclusion_words
        return max(60, rest // max(1, sections))


# Sections of three or four excerpts: a call writes some 150 words of what its excerpts say
# (the embedded model, held to more, repeats itself), so length comes from more sections,
# each from its own evidence. A long report's 40 excerpts take deeper searches: at top_k, its
# sub-queries found enough for 7 or 8 sections on the sample corpus.
SHAPES: dict[Length, Shape] = {
    "brief": Shape(words=300, sections=2, excerpts=3, findings=2),
    "standard": Shape(words=1000, sections=6, excerpts=3, findings=4),
    "long": Shape(words=2500, sections=10, excerpts=4, findings=6, depth=2),
}


def shape_of(state: Mapping, length: str) -> Shape:
    """The run's report shape: the state's report_length, else `length` (the setting)."""
    return SHAPES[state.get("report_length") or length]


def tokens_for(words: int) -> int:
    """The completion budget for `words` of cited sentences: about 1.4 tokens a word, and the
    JSON around each sentence (its text key and excerpt numbers, some 12 tokens per 20 words)."""
    return round(words * 2.2) + 60


# The headings the report writes itself. Section headings and prose come from the model in the
# report's language; these are looked up, English when the language is not listed.
_LABELS = {
    "english": ("Key findings", "Conclusion", "Notes", "Sources"),
    "german": ("Wichtigste Ergebnisse", "Fazit", "Hinweise", "Quellen"),
    "french": ("Principaux résultats", "Conclusion", "Remarques", "Sources"),
    "spanish": ("Conclusiones principales", "Conclusión", "Notas", "Fuentes"),
    "italian": ("Risultati principali", "Conclusione", "Note", "Fonti"),
    "portuguese": ("Principais conclusões", "Conclusão", "Notas", "Fontes"),
    "dutch": ("Belangrijkste bevindingen", "Conclusie", "Opmerkingen", "Bronnen"),
    "chinese": ("主要发现", "结论", "说明", "来源"),
    "japanese": ("主な調査結果", "結論", "注記", "出典"),
}
_NAMES = {"deutsch": "german", "français": "french", "español": "spanish", "nederlands": "dutch"}


class Labels(BaseModel):
    findings: str
    conclusion: str
    notes: str
    sources: str


def labels(language: str) -> Labels:
    name = language.strip().lower()
    name = _NAMES.get(name, name)
    findings, conclusion, notes, sources = _LABELS.get(name, _LABELS["english"])
    return Labels(findings=findings, conclusion=conclusion, notes=notes, sources=sources)


def echoes_query(heading: str, asked: list[str]) -> bool:
    """Whether a section heading is a question, or one of `asked` (the report's question and
    queries) in other case or punctuation, numbered or not ("… (2)": a section going on from
    a query's leftover evidence): not written for a reader."""
    heading = _NUMBERED.sub("", heading)
    return heading.endswith("?") or _plain(heading) in {_plain(q) for q in asked}


def part_heading(heading: str, part: int) -> str:
    """`heading` for `part` 1, 2 … of a section going on from another's query: "… (2)"."""
    return f"{heading} ({part + 1})" if part else heading


_NUMBERED = re.compile(r" \(\d+\)$")  # what part_heading() adds


def _plain(text: str) -> str:
    return text.casefold().strip(" ?.:")


def is_english(language: str) -> bool:
    """Unset counts as English: the claim check then also checks names (see claims.py)."""
    return language.strip().lower() in ("", "english", "en")
