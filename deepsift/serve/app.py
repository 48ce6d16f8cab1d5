"""The web app of `deepsift serve`: a JSON and server-sent-events API over the research runs,
uploads and reports, and the page (static/) that uses it. One process, one store, one model."""

import asyncio
import html
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import (
    HTMLResponse,
    JSONResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from deepsift.agents import AGENTS, Agent
from deepsift.api import CitedExcerpt, ResearchResult, read_run
from deepsift.config import Settings
from deepsift.deps import Deps
from deepsift.errors import UserError
from deepsift.llm.endpoint import endpoint_failure
from deepsift.report.output.export import FORMATS, report_bytes
from deepsift.retrieval.sources import WEB, WEB_DESCRIPTION
from deepsift.serve.guard import SECURITY_HEADERS, TOKEN_COOKIE, Guard, TooLarge, json_body
from deepsift.serve.runs import (
    FINAL_EVENTS,
    AskRequest,
    QueueFull,
    RunRecord,
    RunRequest,
    Runs,
    Unfinished,
    UnknownRun,
    followup_payload,
    one_line_error,
    result_payload,
    validation_line,
)
from deepsift.serve.upload_ingest import ingest_events, receive_files

STATIC = Path(__file__).parent / "static"
MEDIA = {
    "md": "text/markdown; charset=utf-8",
    "html": "text/html; charset=utf-8",
    "pdf": "application/pdf",
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
}
POLL = 0.05  # seconds between looks at a run's events while streaming them


def create_app(
    settings: Settings, deps: Deps | None = None, token: str = "", workers: int | None = None
) -> Starlette:
    """The app over `deepsift` (opened here from `settings` when not given, and then closed
    with the app). With `token`, every request must carry it; without, only requests addressed
    to a loopback name are served (a page elsewhere cannot rebind a name to this server)."""
    handlers = Handlers(settings, deps, token, workers)
    refusals = {HTTPException: _refused, Exception: _failed}
    app = Starlette(
        routes=handlers.routes(), lifespan=handlers.lifespan, exception_handlers=refusals
    )
    app.add_middleware(Guard, token=token)
    app.state.runs = handlers.runs
    return app


def _error(message: str, status: int = 400) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


async def _refused(request: Request, e: HTTPException) -> JSONResponse:
    """Starlette's own refusals (no such route, a method it does not take) as one JSON line."""
    path, headers = request.url.path, dict(e.headers or {})
    if e.status_code == 405:  # every method of every route at the path, not only the first's
        routes = [r for r in request.app.router.routes if isinstance(r, Route) and r.methods]
        allowed = sorted({m for r in routes if r.path_regex.match(path) for m in r.methods})
        headers["Allow"] = ", ".join(allowed)
    message = {
        404: f"nothing at {path}: the API is under /api/",
        405: f"{request.method} is not accepted at {path}; use {headers.get('Allow')}",
    }.get(e.status_code, str(e.detail))
    return JSONResponse({"error": message}, status_code=e.status_code, headers=headers)


async def _failed(request: Request, e: Exception) -> JSONResponse:
    """A request the server failed on, as one JSON line; outside Guard, so with the security
    headers here (the traceback goes to the server's log)."""
    message = f"the server failed on this request ({type(e).__name__}); its log says more"
    return JSONResponse({"error": message}, status_code=500, headers=SECURITY_HEADERS)


class Handlers:
    """The app's answers to each route, over one store and one queue of runs."""

    def __init__(
        self, settings: Settings, deps: Deps | None, token: str, workers: int | None
    ) -> None:
        self.own = deps is None  # opened here, so closed with the app
        self.settings = settings
        self.deps = deps or Deps.from_settings(settings)
        self.runs = Runs(settings, self.deps, workers)
        self.token = token

    async def page(self, request: Request) -> Response:
        if self.token and "token" in request.query_params:
            # The link `deepsift serve` printed: the token goes into a cookie, out of the URL
            # (history, logs, a shared screen), and the page's requests carry it from there.
            response = RedirectResponse("/", status_code=303)
            response.set_cookie(
                TOKEN_COOKIE,
                self.token,
                httponly=True,
                samesite="strict",
                secure=request.url.is_secure,
            )
            return response
        text = (STATIC / "index.html").read_text(encoding="utf-8")
        text = text.replace("{{agents}}", "\n".join(map(_option, AGENTS.values())))
        return HTMLResponse(text, headers={"Cache-Control": "no-store"})

    async def collections(self, request: Request) -> JSONResponse:
        def listing() -> list[dict[str, Any]]:
            found = [self.deps.store.info(name).model_dump() for name in self.deps.store.names()]
            if self.deps.web:
                found.append(
                    {"name": WEB, "description": WEB_DESCRIPTION, "documents": 0, "chunks": 0}
                )
            return found

        return JSONResponse(await run_in_threadpool(listing))

    async def start_run(self, request: Request) -> JSONResponse:
        try:
            asked = RunRequest.model_validate(await json_body(request))
        except TooLarge as e:
            return _error(f"a run's JSON: {e}", 413)
        except ValidationError as e:
            return _error(f"a run's JSON: {validation_line(e)}")
        except ValueError:
            return _error("a run needs JSON {question, collections, length, language, agent}")
        try:
            run = await run_in_threadpool(self.runs.start, asked)
        except QueueFull as e:
            return _error(str(e), 429)
        except UnknownRun as e:
            return _error(str(e), 404)
        except UserError as e:
            return _error(str(e))
        return JSONResponse(
            {"thread_id": run.record.thread_id, "status": run.record.status}, status_code=202
        )

    async def cancel_run(self, request: Request) -> JSONResponse:
        thread_id = request.path_params["thread_id"]
        try:
            run = self.runs.cancel(thread_id)
        except UserError as e:
            return _error(str(e), 404)
        return JSONResponse({"thread_id": thread_id, "status": run.record.status}, status_code=202)

    async def list_runs(self, request: Request) -> JSONResponse:
        records = await run_in_threadpool(self.runs.records)
        return JSONResponse([record.model_dump() for record in records])

    async def finished(
        self, thread_id: str
    ) -> tuple[RunRecord | None, tuple[ResearchResult, list[CitedExcerpt]] | None]:
        """The run's record, and what it saved (None: nothing yet, or it is queued or running)."""
        live = self.runs.get(thread_id)
        record = live.record if live else self.runs.record(thread_id)
        if live and not live.ended:
            return record, None
        return record, await run_in_threadpool(read_run, thread_id, self.settings, self.deps)

    async def get_run(self, request: Request) -> JSONResponse:
        thread_id = request.path_params["thread_id"]
        record, saved = await self.finished(thread_id)
        if record is None and saved is None:
            return _error(f"no run has thread id {thread_id}", 404)
        record_data = record.model_dump() if record else {"thread_id": thread_id}
        result = None
        if saved:
            excerpts = [excerpt.model_dump() for excerpt in saved[1]]
            result = {**result_payload(saved[0]), "excerpts": excerpts}
        return JSONResponse({"run": record_data, "result": result})

    async def ask(self, request: Request) -> JSONResponse:
        thread_id = request.path_params["thread_id"]
        try:
            asked = AskRequest.model_validate(await json_body(request))
        except TooLarge as e:
            return _error(f"a follow-up's JSON: {e}", 413)
        except ValidationError as e:
            return _error(f"a follow-up's JSON: {validation_line(e)}")
        except ValueError:
            return _error("a follow-up needs JSON {question}")
        try:
            answering = await run_in_threadpool(self.runs.ask, thread_id, asked.question)
            followup = await asyncio.wrap_future(answering)
        except UnknownRun as e:
            return _error(str(e), 404)
        except Unfinished as e:
            return _error(str(e), 409)
        except UserError as e:
            return _error(str(e))
        except Exception as e:  # the endpoint's failure is the answer; a bug is the server's
            if endpoint_failure(e) is None:
                raise
            return _error(one_line_error(e), 502)
        return JSONResponse(followup_payload(followup))

    async def events(self, request: Request) -> Response:
        thread_id = request.path_params["thread_id"]
        run = self.runs.get(thread_id)
        if run is None:
            return _error(f"no run in progress has thread id {thread_id}; fetch it instead", 404)
        last = request.headers.get("last-event-id", "")
        start = int(last) + 1 if last.isdigit() else 0

        async def stream() -> AsyncIterator[str]:
            sent = start
            while True:
                while sent < len(run.events):
                    event = run.events[sent]
                    data = json.dumps(event["data"], ensure_ascii=False)
                    yield f"id: {sent}\nevent: {event['event']}\ndata: {data}\n\n"
                    sent += 1
                    if event["event"] in FINAL_EVENTS:
                        return
                # Asked from past the run's last event (a reconnect after the end): nothing
                # more will come.
                if run.events and run.events[-1]["event"] in FINAL_EVENTS:
                    return
                await asyncio.sleep(POLL)

        return StreamingResponse(
            stream(), media_type="text/event-stream", headers={"Cache-Control": "no-store"}
        )

    async def report(self, request: Request) -> Response:
        thread_id, fmt = request.path_params["thread_id"], request.path_params["fmt"]
        if fmt not in FORMATS:
            return _error(f"no report format {fmt!r}; choose from {', '.join(FORMATS)}", 404)
        version = request.query_params.get("version", "")
        if version and not (version.isdigit() and int(version) > 0):
            return _error(f"version {version!r}: a report's versions are numbered from 1")
        _, saved = await self.finished(thread_id)
        if not saved or not saved[0].report:
            return _error(f"run {thread_id} has no report (yet)", 404)
        try:  # the version (default: the latest), the follow-up answers as an appendix
            text = saved[0].exported(int(version) if version else None)
        except UserError as e:
            return _error(str(e), 404)
        data = await run_in_threadpool(report_bytes, text, fmt, "", self.settings.pdf_fonts)
        name = f"deepsift-{thread_id}-v{version}" if version else f"deepsift-{thread_id}"
        disposition = f'attachment; filename="{name}.{fmt}"'
        return Response(data, media_type=MEDIA[fmt], headers={"Content-Disposition": disposition})

    async def upload(self, request: Request) -> Response:
        collection = request.path_params["name"]
        try:
            saved = await receive_files(request, self.settings, collection)
        except UserError as e:
            return _error(str(e), getattr(e, "status", 400))
        description = request.query_params.get("description") or None
        replace = request.query_params.get("replace_description") == "true"
        return StreamingResponse(
            ingest_events(saved, collection, description, self.deps, self.settings, replace),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-store"},
        )

    @asynccontextmanager
    async def lifespan(self, app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            self.runs.close()
            if self.own:
                self.deps.store.close()

    def routes(self) -> list[Route | Mount]:
        return [
            Route("/", self.page),
            Route("/api/collections", self.collections),
            Route("/api/collections/{name}/files", self.upload, methods=["POST"]),
            Route("/api/runs", self.list_runs),
            Route("/api/runs", self.start_run, methods=["POST"]),
            Route("/api/runs/{thread_id}", self.get_run),
            Route("/api/runs/{thread_id}/cancel", self.cancel_run, methods=["POST"]),
            Route("/api/runs/{thread_id}/ask", self.ask, methods=["POST"]),
            Route("/api/runs/{thread_id}/events", self.events),
            Route("/api/runs/{thread_id}/report.{fmt}", self.report),
            Mount("/static", StaticFiles(directory=STATIC), name="static"),
        ]


def _option(agent: Agent) -> str:
    """The agent in the page's menu."""
    label = html.escape(f"{agent.name}: {agent.summary}")
    return f'<option value="{html.escape(agent.name)}">{label}</option>'
