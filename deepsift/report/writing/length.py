"""How long a report is (report_length): its words, and how they are shared out among its
sections."""

from collections.abc import Mapping

from pydantic import BaseModel

from deepsift.config import Length


class Shape(BaseModel):
    """A report length: its body's words (summary, sections and conclusion) and how they are
    shared out."""

    words: int
    sections: int  # at most (a question of more parts gets more); fewer with less evidence
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


# A section is some 8 evidence sentences (its words / 16, deepsift.report.compose), so
# length comes from more sections, each from its own evidence. A long report's evidence takes
# deeper searches: at top_k, its sub-queries found enough for 7 or 8 sections on the sample
# corpus.
SHAPES: dict[Length, Shape] = {
    "brief": Shape(words=300, sections=2),
    "standard": Shape(words=1000, sections=6),
    "long": Shape(words=2500, sections=10, depth=2),
}


def shape_of(state: Mapping, length: str) -> Shape:
    """The run's report shape: the state's report_length, else `length` (the setting)."""
    return SHAPES[state.get("report_length") or length]


def tokens_for(words: int) -> int:
    """The completion budget for `words` of cited sentences: about 1.4 tokens a word, and the
    JSON around each sentence (its text key and excerpt numbers, some 12 tokens per 20 words)."""
    return round(words * 2.2) + 60
