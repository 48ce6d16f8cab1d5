"""The web app's research runs: a bounded queue over one shared store and model, each run's
events (queue position, steps, result or error), and an index of past runs in the data dir."""

import json
import logging
import os
import tempfile
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError
from rich.text import Text

from deepsift.agents import agent
from deepsift.agents.live_steps import NEXT_STEP, step_lines
from deepsift.api import FollowUpResult, ask, list_runs, new_thread_id, read_run, research
from deepsift.api.limits import MAX_QUESTION_CHARS
from deepsift.config import Length, Settings
from deepsift.deps import Deps
from deepsift.errors import UserError
from deepsift.llm.endpoint import RunCancelled, endpoint_failure
from deepsift.report.output.export import body_html
from deepsift.retrieval.sources import resolve_sources

Status = Literal["queued", "running", "done", "paused", "failed", "stopped"]
INDEX_FILE = "serve-runs.json"
MAX_LANGUAGE_CHARS = 40
MAX_WAITING = 20  # runs queued for a worker at once; more are refused until one starts
FINAL_EVENTS = ("result", "error", "stopped")  # a run's stream ends with one of these
log = logging.getLogger(__name__)


class QueueFull(UserError):
    """Too many runs wait already: HTTP 429, the caller may try again."""


class UnknownRun(UserError):
    """No run has the thread id asked for: HTTP 404."""


class Unfinished(UserError):
    """The run has not finished, or a follow-up to it is being answered: HTTP 409."""


class RunRequest(BaseModel):
    """A research run asked for through the API; `thread_id` alone resumes that run."""

    question: str = Field("", max_length=MAX_QUESTION_CHARS)
    collections: list[str] = []  # sources, "web" among them; empty: every collection
    length: Length | None = None
    language: str | None = Field(None, max_length=MAX_LANGUAGE_CHARS)
    agent: str = "deepsift"
    thread_id: str | None = Field(None, pattern=r"^[A-Za-z0-9_-]{1,64}$")


class AskRequest(BaseModel):
    """A follow-up question put to a finished run through the API."""

    question: str = Field(max_length=MAX_QUESTION_CHARS)


class RunRecord(BaseModel):
    """One line of the index of past runs."""

    thread_id: str
    question: str
    agent: str
    status: Status
    created: float
    started: float | None = None
    finished: float | None = None
    error: str = ""


@dataclass
class Run:
    record: RunRecord
    request: RunRequest
    events: list[dict[str, Any]] = field(default_factory=list)  # {"event", "data"}, in order
    position: int = 0  # its place in the queue when last told (0: not waiting for a worker)
    cancel: threading.Event = field(default_factory=threading.Event)

    @property
    def ended(self) -> bool:
        return self.record.status not in ("queued", "running")


def validation_line(e: ValidationError) -> str:
    """Pydantic's errors as one line: "field: what is wrong; ..." (its report spans lines)."""
    return "; ".join(
        f"{'.'.join(map(str, error['loc'])) or 'body'}: {error['msg']}" for error in e.errors()
    )


def one_line_error(e: Exception) -> str:
    """What a failed run says: the user's error, the endpoint's failure, or (a bug) its type."""
    if isinstance(e, UserError):
        return str(e)
    reason = endpoint_failure(e)
    return reason or f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:300]


def segments(markup: str) -> list[list[str]]:
    """A line of Rich markup as [text, style] pieces the page can show (style: "", "bold"…)."""
    text = Text.from_markup(markup)
    edges = [edge for span in text.spans for edge in (span.start, span.end)]
    cuts = sorted({0, len(text.plain), *edges})
    pieces = []
    for start, end in zip(cuts, cuts[1:], strict=False):
        styles = [str(s.style) for s in text.spans if s.start <= start and end <= s.end]
        pieces.append([text.plain[start:end], " ".join(styles)])
    return pieces


class Runs:
    """Research runs on shared `deps`, `workers` at a time (one on the embedded model, which
    serves one run's requests at once best; `llm_concurrency` for an endpoint); the rest wait
    in order and are told their place."""

    def __init__(self, settings: Settings, deps: Deps, workers: int | None = None) -> None:
        self.settings = settings
        self.deps = deps
        self._workers = workers or (1 if settings.uses_local_llm else settings.llm_concurrency)
        self._pool = ThreadPoolExecutor(self._workers, thread_name_prefix="deepsift-run")
        self._running = 0
        self._lock = threading.Lock()
        self._runs: dict[str, Run] = {}
        self._waiting: list[str] = []
        self._asking: set[str] = set()  # runs a follow-up is put to now, one each at a time
        self._index_path = settings.data_dir / INDEX_FILE
        self._index = self._read_index()

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)

    def start(self, request: RunRequest) -> Run:
        """Check the request, queue the run, and return it; a bad request is a UserError."""
        agent(request.agent)  # an unknown agent is refused before it is queued
        if request.thread_id:
            known = self._index.get(request.thread_id)
            if known is None and read_run(request.thread_id, self.settings, self.deps) is None:
                raise UnknownRun(f"no run has thread id {request.thread_id}: nothing to resume")
            question = request.question or (known.question if known else "")
            if request.thread_id in self._runs and not self._runs[request.thread_id].ended:
                raise UserError(f"run {request.thread_id} is already queued or running")
        else:
            question = request.question
            if not question.strip():
                raise UserError("the question is empty")
            resolve_sources(self.deps, request.collections or None)
        thread_id = request.thread_id or new_thread_id()
        record = RunRecord(
            thread_id=thread_id,
            question=question,
            agent=request.agent,
            status="queued",
            created=time.time(),
        )
        run = Run(record, request)
        with self._lock:  # counted and queued at once: runs asked together cannot all slip in
            if len(self._waiting) >= MAX_WAITING:
                raise QueueFull(
                    f"{len(self._waiting)} runs are waiting already: start this one when one "
                    "of them has started"
                )
            self._runs[thread_id] = run
            self._waiting.append(thread_id)
            self._save(record)
            self._tell_positions()
        self._pool.submit(self._run, run)
        return run

    def ask(self, thread_id: str, question: str) -> Future[FollowUpResult]:
        """Put a follow-up `question` to the finished run `thread_id` on the runs' workers (a
        model job as a run is: on the embedded model, one at a time with the runs); a request
        that cannot be answered is a UserError before anything is queued."""
        if not question.strip():
            raise UserError("the question is empty")
        live = self._runs.get(thread_id)
        if live and not live.ended:
            raise Unfinished(f"run {thread_id} has not finished: ask when its report is done")
        saved = read_run(thread_id, self.settings, self.deps)
        if saved is None:
            raise UnknownRun(f"no run has thread id {thread_id}")
        if saved[0].status != "done" or not saved[0].report:
            raise Unfinished(
                f"run {thread_id} has not finished: resume it, then ask when its report is done"
            )
        with self._lock:
            if thread_id in self._asking:
                raise Unfinished(f"a follow-up to run {thread_id} is being answered: wait for it")
            self._asking.add(thread_id)
        return self._pool.submit(self._ask, thread_id, question)

    def _ask(self, thread_id: str, question: str) -> FollowUpResult:
        with self._lock:
            self._running += 1
            self._tell_positions()
        try:
            return ask(thread_id, question, self.settings, deps=self.deps)
        finally:
            with self._lock:
                self._running -= 1
                self._asking.discard(thread_id)

    def get(self, thread_id: str) -> Run | None:
        return self._runs.get(thread_id)

    def cancel(self, thread_id: str) -> Run:
        """Stop a queued or running run before its next model call or step; what it finished
        is kept, and starting it again by its thread id resumes it."""
        run = self._runs.get(thread_id)
        if run is None or run.ended:
            raise UserError(f"no run in progress has thread id {thread_id}")
        with self._lock:
            run.cancel.set()
            if thread_id in self._waiting:  # never started: stopped now, its place freed
                self._waiting.remove(thread_id)
                self._tell_positions()
                self._stopped(run)
        return run

    def records(self) -> list[RunRecord]:
        """Every run known, newest first: this app's, and those made on the same data folder
        by the command line or the Python API."""
        elsewhere = list_runs(self.settings)
        with self._lock:
            records = list(self._index.values())
        records += [
            RunRecord(
                thread_id=run.thread_id,
                question=run.question,
                agent=run.agent,
                status=run.status,
                created=run.started.timestamp(),
                started=run.started.timestamp(),
            )
            for run in elsewhere
            if run.thread_id not in self._index
        ]
        return sorted(records, key=lambda r: r.created, reverse=True)

    def record(self, thread_id: str) -> RunRecord | None:
        return self._index.get(thread_id)

    def _emit(self, run: Run, event: str, data: dict[str, Any]) -> None:
        run.events.append({"event": event, "data": data})

    def _tell_positions(self) -> None:
        """Each run waiting for a worker hears its place in the queue (1: next) when it moves."""
        for n, thread_id in enumerate(self._waiting):
            run = self._runs[thread_id]
            place = max(0, self._running + n - self._workers + 1)
            if place and place != run.position:
                self._emit(run, "queued", {"position": place})
            run.position = place

    def _run(self, run: Run) -> None:
        record = run.record
        with self._lock:
            if record.thread_id not in self._waiting:  # cancelled while it waited: stopped
                return
            self._waiting.remove(record.thread_id)
            self._running += 1
            record.status, record.started = "running", time.time()
            self._save(record)
            self._tell_positions()
        self._emit(run, "started", {"thread_id": record.thread_id})
        try:
            self._research(run)
        finally:
            with self._lock:
                self._running -= 1

    def _research(self, run: Run) -> None:
        record, request = run.record, run.request

        def on_update(node: str, update: dict[str, Any]) -> None:
            lines = [segments(line) for line in step_lines(node, update)]
            if lines:
                self._emit(run, "step", {"node": node, "lines": lines, "next": NEXT_STEP.get(node)})

        try:
            result = research(
                request.question if not request.thread_id else "",
                self.settings,
                agent=request.agent,
                collections=request.collections or None,
                thread_id=record.thread_id,
                on_update=on_update,
                length=request.length,
                language=request.language,
                deps=self.deps,
                cancel=run.cancel,
            )
        except RunCancelled:
            with self._lock:
                self._stopped(run)
            return
        except Exception as e:  # a run's failure is its error event, never the server's end
            if not isinstance(e, UserError) and endpoint_failure(e) is None:
                log.exception("run %s failed", record.thread_id)
            message = one_line_error(e)
            with self._lock:
                record.status, record.finished, record.error = "failed", time.time(), message
                self._save(record)
            self._emit(run, "error", {"message": message})
            return
        with self._lock:
            record.question = result.question
            record.status, record.finished = result.status, time.time()
            self._save(record)
        self._emit(run, "result", result_payload(result))

    def _stopped(self, run: Run) -> None:
        """Record and tell that `run` stopped as asked (the caller holds the lock)."""
        run.record.status, run.record.finished = "stopped", time.time()
        run.record.error = "cancelled"
        self._save(run.record)
        message = "cancelled: start it again by its thread id to go on where it stopped"
        self._emit(run, "stopped", {"message": message})

    def _read_index(self) -> dict[str, RunRecord]:
        try:
            rows = json.loads(self._index_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as e:
            log.warning("ignoring the run index %s: %s", self._index_path, e)
            return {}
        index = {}
        for n, row in enumerate(rows if isinstance(rows, list) else []):
            try:
                record = RunRecord.model_validate(row)
            except ValidationError as e:  # one bad row costs that row, not the server
                why = validation_line(e)
                log.warning("ignoring row %d of %s: %s", n + 1, self._index_path, why)
                continue
            if record.status in ("queued", "running"):  # the server stopped under it
                record.status = "stopped"
            index[record.thread_id] = record
        return index

    def _save(self, record: RunRecord) -> None:
        """Record the run in the index, written whole to a temporary file and swapped in."""
        self._index[record.thread_id] = record
        rows = [r.model_dump() for r in self._index.values()]
        self._index_path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=self._index_path.parent, prefix=".serve-runs.")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as file:
                json.dump(rows, file, ensure_ascii=False)
            os.replace(temporary, self._index_path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise


def result_payload(result: Any) -> dict[str, Any]:
    """A finished run as the page shows it: the result, and its report and follow-ups as safe
    HTML."""
    return {
        **result.model_dump(),
        "html": body_html(result.report) if result.report else "",
        "followups": [followup_payload(followup) for followup in result.followups],
    }


def followup_payload(followup: FollowUpResult) -> dict[str, Any]:
    """A follow-up as the page shows it: the result, and its answer or report as safe HTML."""
    return {**followup.model_dump(), "html": body_html(followup.answer or followup.report)}
