"""What the API returns: a run's report and costs, and the follow-ups asked of it."""

from typing import Literal

from langgraph.types import StateSnapshot
from pydantic import BaseModel

from deepsift.api.versions import numbered
from deepsift.errors import UserError
from deepsift.records import FollowUp, Source, Usage
from deepsift.report.output.citations import sources_section
from deepsift.report.output.headings import labels
from deepsift.text.marks import MARK, mark_all, numbers_of
from deepsift.text.untrusted import flat


class RunUsage(Usage):
    seconds: float = 0.0


class CitedSource(BaseModel):
    n: int
    title: str
    source: str


class TraceStep(BaseModel):
    """One action of a ReAct run: the thought before it, and what it was shown after."""

    thought: str
    action: str  # search, calculate, think, finish, or invalid (a reply without an action)
    argument: str
    observation: str  # a search: the excerpts' numbers and titles


class FollowUpResult(BaseModel):
    """A question asked of a finished run (kind "answer"), or its report rewritten (kind
    "report": shorter, in another language, as a table, one more section)."""

    thread_id: str
    question: str  # what was asked
    kind: Literal["answer", "report"]
    answer: str  # kind "answer": the cited answer, or "The documents do not say. Searched: …"
    report: str  # kind "report": the new version
    version: int = 0  # kind "report": its number; the run's own report is version 1
    language: str = ""  # kind "report": the language it is written in ("": the question's)
    sources: list[CitedSource]  # numbered as the report numbers them, new documents after
    searched: list[str]  # what was searched again for it, in words; [] when nothing was
    usage: RunUsage


class ResearchResult(BaseModel):
    agent: str
    status: Literal["done", "paused"]  # paused: waiting for review; resume with its thread_id
    question: str
    answer: str  # search-o1, react: the short answer the run ended with; deepsift: ""
    report: str
    sources: list[CitedSource]
    sub_queries: list[str]
    iterations: int
    usage: RunUsage
    notes: list[str]  # sources that failed (web searches, pages); the report lists them too
    web_searches: list[str] = []  # each web search and what it returned ("no results" too)
    thread_id: str
    # react: "react" (it finished) or "self-consistency" (the vote); search-o1: "reasoning"
    # (its final line) or "excerpts" (it found nothing, so the excerpts answered)
    answered_by: str = ""
    votes: dict[str, int] = {}  # react's vote: each sampled answer and how many gave it
    trace: list[TraceStep] = []  # react: its actions in order
    followups: list[FollowUpResult] = []  # asked of the finished run (deepsift ask), in order
    asking: str = ""  # a follow-up stopped part way: asking again (or with no question) ends it
    language: str = ""  # the language its report was asked in ("": the question's)

    @property
    def versions(self) -> dict[int, str]:
        """The report's versions by number: the run's own (1), then the rewrites it keeps
        (deepsift.api.versions drops the oldest past max_report_versions)."""
        rewrites = {f.version: f.report for f in self.followups if f.kind == "report"}
        return {1: self.report, **rewrites}

    def exported(self, version: int | None = None) -> str:
        """Report version `version` (default: the latest) with the questions asked of the run
        and their answers as an appendix."""
        number = max(self.versions) if version is None else version
        sources = self.sources_of(number)  # refuses a version the run does not have
        report = self.versions[number]
        rewrite = self._rewrite(number)
        language = rewrite.language if rewrite else self.language
        answers = [f for f in self.followups if f.kind == "answer"]
        if not answers:
            return report
        return f"{report.rstrip()}\n\n{appendix(answers, sources, language)}\n"

    def sources_of(self, version: int) -> list[CitedSource]:
        """The sources report version `version` cites (its numbers are its own)."""
        if version not in self.versions:
            numbers = sorted(self.versions)  # 1, then the rewrites kept: consecutive
            last = numbers[-1]
            kept = f"1 to {last}" if last == len(numbers) else f"1, {numbers[1]} to {last}"
            raise UserError(f"version {version}: run {self.thread_id} has versions {kept}")
        rewrite = self._rewrite(version)
        return rewrite.sources if rewrite else self.sources

    def _rewrite(self, version: int) -> "FollowUpResult | None":
        return next(
            (f for f in self.followups if f.kind == "report" and f.version == version), None
        )


def run_result(agent: str, saved: StateSnapshot, thread_id: str, seconds: float) -> ResearchResult:
    values = saved.values
    usage = values.get("usage") or Usage()
    return ResearchResult(
        agent=agent,
        status="paused" if saved.next else "done",
        question=values["question"],
        answer=values.get("answer", ""),
        report=values.get("report", ""),
        sources=[
            CitedSource(n=s.n, title=s.title, source=s.source) for s in values.get("sources", [])
        ],
        sub_queries=values.get("sub_queries", []),
        iterations=values.get("iteration", 0),
        notes=list(dict.fromkeys(values.get("notes", []))),
        web_searches=values.get("web_searches", []),
        usage=RunUsage(**usage.model_dump(), seconds=round(seconds, 2)),
        thread_id=thread_id,
        answered_by=values.get("answered_by", ""),
        votes=values.get("votes", {}),
        followups=followups_of(values.get("followups", []), thread_id),
        asking=values.get("asking", ""),
        language=values.get("report_language", ""),
        trace=[
            TraceStep(
                thought=done["thought"],
                action=done["action"],
                argument=done["argument"],
                observation=done["summary"],
            )
            for done in values.get("actions", [])
        ],
    )


def followups_of(records: list[FollowUp], thread_id: str) -> list[FollowUpResult]:
    """The run's follow-ups in order, each report version with its number."""
    number = {id(record): n for n, record in numbered(records)}
    return [followup_result(r, thread_id, number.get(id(r), 0)) for r in records]


def followup_result(record: FollowUp, thread_id: str, version: int) -> FollowUpResult:
    """The API's view of a follow-up; `version`: the number a new report version gets."""
    report = record.kind == "report"
    return FollowUpResult(
        thread_id=thread_id,
        question=record.request,
        kind="report" if report else "answer",
        answer="" if report else record.text,
        report=record.text if report else "",
        version=version if report else 0,
        language=record.language if report else "",
        sources=[CitedSource(n=s.n, title=s.title, source=s.source) for s in record.sources],
        searched=record.searched,
        usage=RunUsage(**record.usage.model_dump(), seconds=record.seconds),
    )


def appendix(answers: list[FollowUpResult], sources: list[CitedSource], language: str = "") -> str:
    """The follow-up questions and their answers, each with the sources it cites, numbered
    as the report version they follow (`sources`) numbers them, and documents it does not
    cite after its own; headed in that version's `language`."""
    number = {s.source: s.n for s in sources}
    lines = [f"## {labels(language).followups}"]
    for answer in answers:
        renumbered = {}
        for s in answer.sources:
            number.setdefault(s.source, max(number.values(), default=0) + 1)
            renumbered[s.n] = number[s.source]
        lines += [
            f"### {flat(answer.question).lstrip('#').strip()}",
            _renumbered(answer.answer, renumbered),
        ]
        cited = [s.model_copy(update={"n": renumbered[s.n]}) for s in answer.sources]
        if cited:
            lines.append(source_lines(cited))
    return "\n\n".join(lines)


def source_lines(sources: list[CitedSource]) -> str:
    """The lines of a Sources list for `sources`, as the report writes its own."""
    cited = [Source(**s.model_dump(), chunk_ids=[]) for s in sources]
    return sources_section(cited).partition("\n\n")[2]


def _renumbered(text: str, numbers: dict[int, int]) -> str:
    """`text` with each mark's numbers replaced as `numbers` maps them."""
    return MARK.sub(
        lambda m: mark_all(dict.fromkeys(numbers.get(n, n) for n in numbers_of(m[1]))), text
    )
