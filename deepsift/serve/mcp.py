"""`deepsift mcp`: the research agent as a Model Context Protocol server over stdin and stdout.

Five tools: research, list_collections, ingest, get_report (a run, the follow-ups asked of it,
any version of its report), ask (a follow-up to a finished run, or its report rewritten). Long
calls send progress notifications (each graph step, each file ingested). A failure the user can
fix comes back as a tool error of one line; a bug as the SDK's generic tool error, its traceback
on stderr. stdout carries the protocol only: while it serves, the SDK points file descriptor 1
at stderr, so no print, progress bar or library can write into it.

The store is opened while a call needs it and closed after the last one, so the data directory
is free between calls (a `deepsift ingest` in a terminal can run); the models stay loaded."""

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Annotated, Any

import anyio
import anyio.from_thread
import anyio.to_thread
from langchain_core.language_models import BaseChatModel
from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from pydantic import Field, ValidationError
from rich.text import Text

from deepsift import api
from deepsift.agents.live_steps import step_lines
from deepsift.api.ingest import FileDone, IngestEvent, Started, ingest
from deepsift.config import Length, Settings
from deepsift.deps import Deps
from deepsift.errors import UserError
from deepsift.ingest.loaders import SUPPORTED
from deepsift.llm.chat import chat_model
from deepsift.llm.embedders import Embedder, get_embedder
from deepsift.llm.endpoint import endpoint_failure
from deepsift.serve.mcp_folders import allowed_folders, allowed_path
from deepsift.serve.mcp_results import FollowUp, Ingested, Report, ingested, report_of
from deepsift.serve.runs import MAX_LANGUAGE_CHARS, MAX_QUESTION_CHARS, validation_line
from deepsift.store import CollectionInfo, Store, check_collection_name
from deepsift.web import WEB, web_configured

INSTRUCTIONS = """deepsift researches questions in the user's document collections (and the web when
it is set up) and answers with a report whose [n] cite the passages it retrieved. Call
list_collections to see what can be searched, research to write a report (minutes on a small
model), ask to put a follow-up question to a finished run (or have its report rewritten:
shorter, in another language, as a table, one more section), get_report to read a run again by
its thread id with the follow-ups asked of it, and ingest to add files."""


class _Resources:
    """The models, loaded once; the store, open while at least one call uses it."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._lock = threading.Lock()
        self._embedder: Embedder | None = None
        self._llm: BaseChatModel | None = None
        self._store: Store | None = None
        self._users = 0

    def embedder(self) -> Embedder:
        with self._lock:
            self._embedder = self._embedder or get_embedder(self.settings)
            return self._embedder

    @contextmanager
    def store(self) -> Iterator[Store]:
        with self._lock:
            if self._store is None:
                self._store = Store(self.settings)
            self._users += 1
            store = self._store
        try:
            yield store
        finally:
            with self._lock:
                self._users -= 1
                if not self._users:
                    self._store.close()
                    self._store = None

    @contextmanager
    def deps(self) -> Iterator[Deps]:
        embedder = self.embedder()
        with self._lock:
            self._llm = self._llm or chat_model(self.settings)
        with self.store() as store:
            yield Deps(self.settings, store, embedder, self._llm)


@contextmanager
def _tool_errors() -> Iterator[None]:
    """A failure the user can fix, as the tool error's one line."""
    try:
        yield
    except UserError as e:
        raise ToolError(str(e)) from None
    except Exception as e:
        reason = endpoint_failure(e)
        if reason is None:
            raise  # a bug: the SDK answers a generic tool error and logs the traceback
        raise ToolError(reason) from None


def _progress(ctx: Context) -> Callable[[float, float | None, str], None]:
    """Send a progress notification from the worker thread a tool runs in."""

    def send(progress: float, total: float | None, message: str) -> None:
        anyio.from_thread.run(ctx.report_progress, progress, total, message)

    return send


def _saved_run(thread_id: str, settings: Settings, deps: Deps) -> api.ResearchResult:
    found = api.read_run(thread_id, settings, deps)
    if found is None:
        raise UserError(f"no research run has thread id {thread_id!r}")
    return found[0]


class _OneLineErrors(MCPServer):
    """The SDK's server, whose tool errors are the line the user reads: a refused argument as
    "length: Input should be 'brief', 'standard' or 'long'" (not pydantic's report), a tool's
    own error without the SDK's "Error executing tool NAME: " before it."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except UnexpectedToolError:
            raise  # a bug: the SDK's generic error, its traceback on stderr
        except ToolError as e:
            if isinstance(e.__cause__, ValidationError):
                raise ToolError(validation_line(e.__cause__)) from e.__cause__
            raise ToolError(str(e).removeprefix(f"Error executing tool {name}: ")) from e


def build_server(settings: Settings) -> MCPServer:
    resources = _Resources(settings)
    server = _OneLineErrors("deepsift", instructions=INSTRUCTIONS, log_level="WARNING")
    web = f" and {WEB!r} (the web)" if web_configured(settings) else ""

    @server.tool(
        description="Research a question in the collections and write a cited report "
        "(Markdown ending with ## Sources). Takes minutes; sends a progress notification per "
        "step. Returns the report, its sources and a thread_id for get_report."
    )
    async def research(
        question: Annotated[
            str, Field(description="the question to research", max_length=MAX_QUESTION_CHARS)
        ],
        ctx: Context,
        sources: Annotated[
            list[str] | None,
            Field(description=f"collection names{web} to search; default: every collection"),
        ] = None,
        length: Annotated[
            Length | None, Field(description="brief ~300, standard ~1,000, long ~2,500 words")
        ] = None,
        language: Annotated[
            str | None,
            Field(
                description="the report's language; default: the question's",
                max_length=MAX_LANGUAGE_CHARS,
            ),
        ] = None,
    ) -> Report:
        return await _research(question, sources, length, language, ctx, settings, resources)

    _add_collection_tools(server, settings, resources)
    _add_thread_tools(server, settings, resources)
    return server


def _add_collection_tools(server: MCPServer, settings: Settings, resources: _Resources) -> None:
    """list_collections, and ingest (files into a collection)."""

    @server.tool(description="The collections research can search: name, description, size.")
    def list_collections() -> list[CollectionInfo]:
        with _tool_errors(), resources.store() as store:
            return [store.info(name) for name in store.names()]

    @server.tool(
        description="Add files or folders (absolute paths inside the folders the user allowed: "
        "the client's roots and the server's --allow folders; folders recursively: "
        f"{' '.join(sorted(SUPPORTED))}) to a collection, creating it if needed. Unchanged "
        "files are skipped. Sends a progress notification per file."
    )
    def ingest(
        paths: Annotated[list[str], Field(description="files or folders, absolute paths")],
        collection: Annotated[str, Field(description="letters, digits and _; created if new")],
        ctx: Context,
        description: Annotated[
            str | None,
            Field(description="what the collection holds; research routes questions by it"),
        ] = None,
    ) -> Ingested:
        return _ingest(paths, collection, description, ctx, settings, resources)


def _add_thread_tools(server: MCPServer, settings: Settings, resources: _Resources) -> None:
    """get_report and ask: a finished run read again, asked a follow-up, or rewritten."""

    @server.tool(
        description="A research run by its thread_id: its report, sources and usage, and the "
        "follow-ups asked of it (nothing is run again). With version: that version of the "
        "report (1 the run's own, 2 on the rewrites ask made) with the answers to the "
        "follow-up questions as an appendix."
    )
    def get_report(
        thread_id: Annotated[str, Field(description="the thread_id research returned")],
        version: Annotated[
            int | None, Field(description="the report version; default: the run's own", ge=1)
        ] = None,
    ) -> Report:
        with _tool_errors(), resources.deps() as deps:
            return report_of(_saved_run(thread_id.strip(), settings, deps), version)

    @server.tool(
        description="Ask a finished research run (its thread_id) a follow-up question, answered "
        "from the run's evidence first (its sources searched again only when that does not "
        "answer it), citing with the report's [n]; or have its report rewritten ('shorter', "
        "'in German', 'as a table', 'add a section on X'), which makes a new version. Kept "
        "with the run: get_report lists it."
    )
    async def ask(
        thread_id: Annotated[str, Field(description="the thread_id research returned")],
        question: Annotated[
            str,
            Field(
                description="a question, or how to rewrite the report; empty: finish a "
                "follow-up that was stopped part way",
                max_length=MAX_QUESTION_CHARS,
            ),
        ],
    ) -> FollowUp:
        return await _ask(thread_id.strip(), question, settings, resources)


async def _research(
    question: str,
    sources: list[str] | None,
    length: Length | None,
    language: str | None,
    ctx: Context,
    settings: Settings,
    resources: _Resources,
) -> Report:
    """The research tool: a run with a progress notification per step, cancelled with the
    call."""
    send = _progress(ctx)
    steps = 0

    def on_update(node: str, update: dict[str, Any]) -> None:
        nonlocal steps
        lines = [Text.from_markup(line).plain for line in step_lines(node, update)]
        if lines:
            steps += 1
            send(steps, None, "\n".join(lines))

    cancel = threading.Event()

    def work() -> Report:
        with _tool_errors(), resources.deps() as deps:
            result = api.research(
                question,
                settings,
                collections=sources or None,
                length=length,
                language=language,
                on_update=on_update,
                deps=deps,
                cancel=cancel,
            )
        return report_of(result)

    try:
        return await anyio.to_thread.run_sync(work, abandon_on_cancel=True)
    except anyio.get_cancelled_exc_class():
        # The client cancelled the call: the run stops before its next model call or step
        # (its finished steps saved under its thread id).
        cancel.set()
        raise


async def _ask(
    thread_id: str, question: str, settings: Settings, resources: _Resources
) -> FollowUp:
    """The ask tool: a follow-up in a worker thread, cancelled with the call."""
    cancel = threading.Event()

    def work() -> FollowUp:
        with _tool_errors(), resources.deps() as deps:
            _saved_run(thread_id, settings, deps)  # refused as get_report refuses it
            asked = api.ask(thread_id, question, settings, deps=deps, cancel=cancel)
        return FollowUp.model_validate(asked.model_dump())

    try:
        return await anyio.to_thread.run_sync(work, abandon_on_cancel=True)
    except anyio.get_cancelled_exc_class():
        cancel.set()  # the follow-up stops before its next model call; asking again ends it
        raise


def _ingest(
    paths: list[str],
    collection: str,
    description: str | None,
    ctx: Context,
    settings: Settings,
    resources: _Resources,
) -> Ingested:
    """The ingest tool: the paths inside the allowed folders, through deepsift.api.ingest, with
    a progress notification per file; nothing ingested is the tool's error."""
    send = _progress(ctx)
    total = 0
    done = 0

    def on_event(event: IngestEvent) -> None:
        nonlocal total, done
        match event:
            case Started():
                total = event.files
                send(0, total, f"{total} files to read")
            case FileDone(result=result):
                done += 1
                send(done, max(done, total), f"{result.status} {result.source}")

    with _tool_errors():
        if not paths:
            raise UserError("give at least one path to ingest")
        check_collection_name(collection)
        allowed = allowed_folders(settings, ctx)
        given = [allowed_path(path, allowed) for path in paths]
        with resources.store() as store:
            finished = ingest(
                given,
                collection,
                store,
                settings,
                embedder=resources.embedder(),
                description=description,
                inside=allowed,
                on_event=on_event,
            )
        if finished.nothing:
            raise UserError(finished.nothing)
    return ingested(collection, finished.report)


def serve(settings: Settings) -> None:
    """Answer MCP requests on stdin and stdout until the client closes them."""
    build_server(settings).run("stdio")
