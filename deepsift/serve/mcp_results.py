"""What the MCP server's tools answer: a run's report with its follow-ups, a follow-up, an
ingest's counts; each a pydantic model, so the client gets its JSON schema."""

from typing import Literal

from pydantic import BaseModel, Field

from deepsift import api
from deepsift.ingest.pipeline import IngestReport


class Asked(BaseModel):
    """A follow-up as get_report lists it."""

    question: str
    kind: Literal["answer", "report"] = Field(description="report: the report rewritten")
    answer: str = Field(description="kind answer: Markdown whose [n] are its sources")
    version: int = Field(description="kind report: the version it made; get_report reads it")
    sources: list[api.CitedSource]


class Report(BaseModel):
    thread_id: str = Field(description="get_report and ask take it")
    status: str = Field(description="done, or paused (a run stopped part way)")
    question: str
    version: int = Field(description="the report's version: 1 the run's own, 2... its rewrites")
    report: str = Field(description="Markdown; its [n] are listed under ## Sources")
    sources: list[api.CitedSource]
    notes: list[str] = Field(description="sources that failed (web searches, pages)")
    usage: api.RunUsage
    followups: list[Asked] = Field(description="the questions asked of the run, in order")
    asking: str = Field(description="a follow-up stopped part way: ask it again to finish it")


class FollowUp(BaseModel):
    thread_id: str
    question: str
    kind: Literal["answer", "report"] = Field(description="report: a new version of the report")
    answer: str = Field(
        description="kind answer: Markdown whose [n] are its sources, or "
        "'The documents do not say. Searched: ...'"
    )
    report: str = Field(description="kind report: the new version, Markdown")
    version: int = Field(description="kind report: its number (the run's own report is 1)")
    sources: list[api.CitedSource] = Field(
        description="numbered as the report numbers them, new documents after"
    )
    searched: list[str] = Field(description="what was searched again for it; [] when nothing")
    usage: api.RunUsage


class IngestedFile(BaseModel):
    path: str
    status: str = Field(description="added, updated, unchanged, failed or pruned")
    chunks: int
    error: str


class Ingested(BaseModel):
    collection: str
    added: int
    updated: int
    unchanged: int
    failed: int
    new_chunks: int
    files: list[IngestedFile]


def report_of(result: api.ResearchResult, version: int | None = None) -> Report:
    """The run as its own report (version 1), or as report `version` with the follow-up
    answers as an appendix; its follow-ups listed either way."""
    report, sources = result.report, result.sources
    if version is not None:
        report = result.exported(version)  # refuses a version the run does not have
        sources = result.sources_of(version)
    asked = [
        Asked(
            question=f.question, kind=f.kind, answer=f.answer, version=f.version, sources=f.sources
        )
        for f in result.followups
    ]
    return Report(
        thread_id=result.thread_id,
        status=result.status,
        question=result.question,
        version=version or 1,
        report=report,
        sources=sources,
        notes=result.notes,
        usage=result.usage,
        followups=asked,
        asking=result.asking,
    )


def ingested(collection: str, report: IngestReport) -> Ingested:
    files = [
        IngestedFile(path=f.source, status=f.status, chunks=f.chunks, error=f.error)
        for f in report.files
    ]
    return Ingested(
        collection=collection,
        added=report.count("added"),
        updated=report.count("updated"),
        unchanged=report.count("unchanged"),
        failed=report.count("failed"),
        new_chunks=report.new_chunks,
        files=files,
    )
