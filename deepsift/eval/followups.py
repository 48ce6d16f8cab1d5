"""`deepsift eval followups`: research each report question (a finished run is reused), then
ask it its follow-ups, each from the report's evidence alone (nothing is kept in the run, so a
rerun asks the same), and score every answer without a model."""

import hashlib
import json
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, ValidationError

from deepsift.api import FollowUpResult, ask, research
from deepsift.config import Settings
from deepsift.deps import Deps
from deepsift.errors import UserError
from deepsift.eval.metrics import token_f1
from deepsift.followups.questions import NOT_SAID
from deepsift.text.marks import without_marks


class ReportLine(BaseModel):
    id: str
    question: str


class FollowUpLine(BaseModel):
    """A follow-up asked after report `after`; `answer`: strings any of which a right answer
    holds (all of them with `all`: one for each part of a question that asks two things; None:
    the folder cannot answer it); `kind`: evidence, search, none …, as written."""

    id: str
    after: str
    question: str
    answer: list[str] | str | None = None
    gold_sources: list[str] = []
    kind: str = ""
    all: bool = False

    @property
    def answers(self) -> list[str]:
        return [self.answer] if isinstance(self.answer, str) else list(self.answer or [])


def load(path: Path) -> tuple[list[ReportLine], list[FollowUpLine]]:
    """The report questions (lines {"id", "question"}) and the follow-ups (lines with
    "after"), each follow-up after a report of the file; a bad line is named."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise UserError(f"cannot read questions file {path}: {e}") from e
    reports, followups = [], []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
            if isinstance(data, dict) and "after" in data:
                followups.append(FollowUpLine.model_validate(data))
            else:
                reports.append(ReportLine.model_validate(data))
        except (ValueError, ValidationError) as e:
            first = str(e).splitlines()[0]
            raise UserError(f"{path}:{n}: not a report or follow-up line ({first})") from e
    known = {r.id for r in reports}
    if orphan := next((f for f in followups if f.after not in known), None):
        raise UserError(f"{path}: follow-up {orphan.id} is after {orphan.after!r}, no report line")
    if not followups:
        raise UserError(f'{path} has no follow-up lines ({{"id", "after", "question"}})')
    return reports, followups


def thread_of(report: ReportLine) -> str:
    """The run of a report question: one per id and wording, so a rerun reuses it."""
    digest = hashlib.sha256(report.question.encode()).hexdigest()[:8]
    return f"followups-{report.id}-{digest}"


def ask_and_score(
    reports: list[ReportLine],
    followups: list[FollowUpLine],
    settings: Settings,
    deps: Deps,
    sources: list[str],
    on_row: Callable[[dict], None] = lambda row: None,
) -> list[dict]:
    """Each report researched (or its finished run reread), then its follow-ups asked and
    scored, one row each; a failed follow-up is a row with its error."""
    rows = []
    for report in reports:
        asked = [f for f in followups if f.after == report.id]
        if not asked:
            continue
        thread = thread_of(report)
        research(report.question, settings, collections=sources, thread_id=thread, deps=deps)
        for followup in asked:
            try:
                answer = ask(thread, followup.question, settings, deps=deps, keep=False)
                row = score(followup, answer)
            except UserError as e:
                row = {"id": followup.id, "kind": followup.kind, "error": str(e)}
            rows.append(row)
            on_row(row)
    return rows


def score(followup: FollowUpLine, answer: FollowUpResult) -> dict:
    """The answer's scores: whether it holds an expected answer (or, when none is expected,
    says the documents do not), its best token F1, whether it cites a gold document, and what
    it cost."""
    not_said = answer.answer.startswith(NOT_SAID)
    said = "" if not_said else without_marks(answer.answer)  # not the question it echoes
    cited = [Path(s.source).name for s in answer.sources]
    expected = followup.answers
    return {
        "id": followup.id,
        "kind": followup.kind,
        "question": followup.question,
        "answer": answer.answer,
        "expected": expected,
        "correct": (all if followup.all else any)(a.casefold() in said.casefold() for a in expected)
        if expected
        else not_said,
        "f1": round(max((token_f1(said, a) for a in expected), default=float(not_said)), 3),
        "gold_cited": bool(set(cited) & set(followup.gold_sources)),
        "said_not": not_said,
        "searched": bool(answer.searched),
        "llm_calls": answer.usage.llm_calls,
        "prompt_tokens": answer.usage.prompt_tokens,
        "completion_tokens": answer.usage.completion_tokens,
        "seconds": answer.usage.seconds,
    }


def summary(rows: list[dict]) -> str:
    """A Markdown table by kind, by whether a search ran, and overall: the share correct (an
    expected answer, or "do not say" where none is), of the correct ones those citing a gold
    document, F1, calls and seconds (mean and most), and the share that searched."""
    groups = {
        kind: lambda r, k=kind: r.get("kind") == k for kind in sorted({r["kind"] for r in rows})
    }
    groups |= {
        "no search": lambda r: "error" not in r and not r["searched"],
        "searched": lambda r: "error" not in r and r["searched"],
        "all": lambda r: True,
    }
    lines = [
        "| kind | n | correct | correct & gold cited | F1 | searched | calls (mean / max) "
        "| seconds (mean / max) | errors |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for kind, member in groups.items():
        group = [r for r in rows if member(r)]
        done = [r for r in group if "error" not in r]
        if not done:
            continue
        right = [r for r in done if r["correct"]]
        cited = sum(r["gold_cited"] for r in right if r["expected"])
        answerable = sum(1 for r in right if r["expected"])
        calls = [r["llm_calls"] for r in done]
        seconds = [r["seconds"] for r in done]
        lines.append(
            f"| {kind} | {len(done)} | {len(right) / len(done):.2f} | "
            f"{f'{cited}/{answerable}' if answerable else '-'} | "
            f"{sum(r['f1'] for r in done) / len(done):.2f} | "
            f"{sum(r['searched'] for r in done) / len(done):.2f} | "
            f"{sum(calls) / len(calls):.2f} / {max(calls)} | "
            f"{sum(seconds) / len(seconds):.1f} / {max(seconds):.1f} | {len(group) - len(done)} |"
        )
    return "\n".join(lines) + "\n"


def write_rows(out: Path, rows: list[dict]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "followups.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (out / "summary.md").write_text(summary(rows))
