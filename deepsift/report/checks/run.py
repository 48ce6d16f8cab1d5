"""One way to run a chosen set of a reader's sentence checks, always in one order, under the
report's language: a check whose rules are English words is skipped in another language (it
would pass or fail by accident there), and the report's Notes name it."""

from collections.abc import Callable
from dataclasses import dataclass

from deepsift.report.checks import statements
from deepsift.report.checks.defects import defects
from deepsift.report.output.headings import is_english


@dataclass(frozen=True)
class Against:
    """What a sentence is checked against: the excerpts it cites, the words it may restate
    (the question, its part), its cited documents' names, titles and paths, and the text a cause
    it gives must stand in (the cited excerpts unless given)."""

    cited: list[str]
    context: str = ""
    sources: tuple[str, ...] = ()
    causes: list[str] | None = None


def _defects(sentence: str, against: Against) -> str:
    caught = defects(sentence)
    return f"a reader's check: {', '.join(caught)}" if caught else ""


# name -> the check, in the order they run; each returns the problem in words, "" if none.
CHECKS: dict[str, Callable[[str, Against], str]] = {
    "defects": _defects,
    "comparison": lambda s, a: statements.wrong_comparison(s),
    "stitched": lambda s, a: statements.stitched(s, a.cited),
    "cause": lambda s, a: statements.unstated_cause(s, a.cited if a.causes is None else a.causes),
    "claim": lambda s, a: statements.unsupported_claim(s, a.cited, a.context),
    "source": lambda s, a: statements.misdescribed_source(s, list(a.sources)),
}
# What each check reads in English words, for the Notes of a report in another language.
ENGLISH_RULES = {
    "defects": "fragments, the documents' own voice and unnamed documents",
    "comparison": "amounts compared the wrong way round",
    "cause": "causes no excerpt states",
    "claim": "claims without figures that their excerpts do not support",
    "source": "sources named as what they are not",
}


def first_problem(sentence: str, against: Against, chosen: list[str], language: str) -> str:
    """The first problem of `sentence` that the `chosen` checks find, in CHECKS' order."""
    for name in CHECKS:
        if name in chosen and (is_english(language) or name not in ENGLISH_RULES):
            if problem := CHECKS[name](sentence, against):
                return problem
    return ""


def unchecked(chosen: list[str], language: str) -> list[str]:
    """What the chosen checks could not look for in `language`: their rules are English words."""
    if is_english(language):
        return []
    return [ENGLISH_RULES[name] for name in CHECKS if name in chosen and name in ENGLISH_RULES]
