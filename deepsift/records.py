"""The records every part of deepsift passes around: a retrieved chunk, a cited source, and
what model calls cost."""

import sys
from typing import Any

from pydantic import BaseModel


class StepCost(BaseModel):
    """What one graph step spent over a run; `seconds` adds up its parallel branches."""

    seconds: float = 0.0
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def __add__(self, other: "StepCost") -> "StepCost":
        return StepCost(
            seconds=round(self.seconds + other.seconds, 3),
            llm_calls=self.llm_calls + other.llm_calls,
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
        )


class Usage(BaseModel):
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0  # of the prompt tokens, those the server reused from its prompt cache
    claims_checked: int = (
        0  # report sentences stating numbers or names (deepsift.report.checks.claims)
    )
    claims_rewritten: int = 0  # of those, failed the check and passed once rewritten
    claims_dropped: int = 0  # failed it again, or could not be rewritten: left out
    steps: dict[
        str, StepCost
    ] = {}  # by graph step (deepsift.run.steps.timed); adds up to the totals

    def __add__(self, other: "Usage") -> "Usage":
        steps = dict(self.steps)
        for name, cost in other.steps.items():
            steps[name] = steps[name] + cost if name in steps else cost
        return Usage(
            llm_calls=self.llm_calls + other.llm_calls,
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            cached_tokens=self.cached_tokens + other.cached_tokens,
            claims_checked=self.claims_checked + other.claims_checked,
            claims_rewritten=self.claims_rewritten + other.claims_rewritten,
            claims_dropped=self.claims_dropped + other.claims_dropped,
            steps=steps,
        )


def usage_of(reply: Any) -> Usage:
    """The cost of one chat completion, from the usage its endpoint reported."""
    meta = getattr(reply, "usage_metadata", None) or {}
    return Usage(
        llm_calls=1,
        prompt_tokens=meta.get("input_tokens", 0),
        completion_tokens=meta.get("output_tokens", 0),
        cached_tokens=(meta.get("input_token_details") or {}).get("cache_read", 0),
    )


class Chunk(BaseModel):
    """A retrieved passage, with where it came from and how well it matched."""

    id: str
    text: str
    source: str
    title: str
    collection: str
    position: int = 0
    score: float = 0.0
    query: str = ""
    published: str = ""  # web pages: the date the page gives, when it gives one
    fused: float = 0.0  # the run's fusion: 1/(RRF_K + rank) summed over the lists that found it
    question_rank: int | None = None  # its rank in the search of the question itself, if any
    link_rank: int | None = None  # the page of a name the hop followed: the order it was found
    found_by: list[str] = []  # every query whose search returned it, after `query` (merge_chunks)
    # Its document's own facts (deepsift.ingest.facts): id, title, authors, date, status …
    facts: dict[str, Any] = {}

    @property
    def queries(self) -> list[str]:
        """The queries whose searches returned it, the best-scoring one first."""
        return list(dict.fromkeys([self.query, *self.found_by]))

    @property
    def body(self) -> str:
        """Its text without the context line ingest puts above it ("Title > Section")."""
        if self.title and self.text.startswith(self.title) and "\n\n" in self.text:
            return self.text.split("\n\n", 1)[1]
        return self.text


class Source(BaseModel):
    """One cited document: its number in the report and the retrieved chunks cited from it."""

    n: int
    title: str
    source: str
    chunk_ids: list[str]


class FollowUp(BaseModel):
    """A question asked of a finished run, or a new version of its report (deepsift.report
    .followup): what was asked and what came of it."""

    request: str
    kind: str  # "answer": a follow-up question; "report": the report rewritten (reshape)
    text: str  # the answer, or the new version of the report, with its [n] marks
    # The documents it cites: the report's numbers for those the report cites, new ones after.
    sources: list[Source] = []
    searched: list[str] = []  # what was searched for it, in words; [] when nothing was
    # A report's version: the language it is written in ("": the question's), and its length.
    language: str = ""
    length: str = ""
    version: int = 0  # kind "report": its number, the run's own report being 1; 0: not taken
    usage: Usage = Usage()
    seconds: float = 0.0


class Route(BaseModel):
    query: str
    sources: list[str]


# Checkpoints saved before these records moved here name their module "deepsift.state": that
# name stays an alias of this module, so the runs saved then still load (graph.state).
sys.modules.setdefault("deepsift.state", sys.modules[__name__])
