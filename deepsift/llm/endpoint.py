"""The watch on a chat endpoint: the process's limit on requests in flight to it, how long the
oldest has waited, a silent endpoint turned into an error, cancelled runs' calls refused, and
the one line that says how an endpoint failed."""

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import httpx2
import openai

CONNECT_SECONDS = 10.0  # a server that does not accept within this is not there


class EndpointSilent(openai.APITimeoutError):
    """The endpoint accepted the request and sent nothing back within the deadline. Not
    retried: a silent server rarely answers the same request sooner the second time."""

    def __init__(self, request: httpx2.Request, seconds: float) -> None:
        openai.APIConnectionError.__init__(
            self,
            message=f"accepted the connection but sent nothing for {seconds:g} s",
            request=request,
        )
        self.seconds = seconds


_outstanding: dict[int, float] = {}  # LLM requests in flight in this process: id -> start
_outstanding_lock = threading.Lock()


def llm_waiting() -> float | None:
    """Seconds the longest-waiting LLM request of this process has waited; None when none is
    in flight (the live view shows it)."""
    with _outstanding_lock:
        started = min(_outstanding.values(), default=None)
    return None if started is None else time.monotonic() - started


_endpoint_slots: dict[str, threading.BoundedSemaphore] = {}
# The run this thread works for asked to stop when this event is set (api.research's `cancel`);
# the graph's threads copy it with their context.
_cancel: ContextVar[threading.Event | None] = ContextVar("deepsift_cancel", default=None)


class RunCancelled(openai.OpenAIError):
    """The run was asked to stop. An OpenAIError, so the SDK neither retries nor wraps it."""


@contextmanager
def cancelled_by(event: threading.Event | None) -> Iterator[None]:
    """Within: once `event` is set, no model call is sent, and check_cancelled raises."""
    token = _cancel.set(event)
    try:
        yield
    finally:
        _cancel.reset(token)


def check_cancelled() -> None:
    event = _cancel.get()
    if event is not None and event.is_set():
        raise RunCancelled("the run was cancelled")


def endpoint_slots(url: str, size: int) -> threading.BoundedSemaphore:
    """The process's one limit on requests in flight to the endpoint at `url`, shared by every
    run, section and batch question (the first size asked for it holds)."""
    with _outstanding_lock:
        return _endpoint_slots.setdefault(url, threading.BoundedSemaphore(size))


class WatchedClient(openai.DefaultHttpxClient):
    """The HTTP client of the chat model: holds its requests to the endpoint's limit in this
    process (llm_concurrency: a rate-limited endpoint answers more with 429s), counts those in
    flight, and turns a read timeout into EndpointSilent (an OpenAIError, which the SDK raises
    without retrying)."""

    def __init__(self, slots: threading.BoundedSemaphore, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._slots = slots

    def send(self, request: httpx2.Request, **kwargs: Any) -> httpx2.Response:
        key = id(request)
        check_cancelled()
        with self._slots:  # a wait here is not the endpoint's: not counted as in flight
            check_cancelled()  # asked while it waited for a slot
            with _outstanding_lock:
                _outstanding[key] = time.monotonic()
            try:
                return super().send(request, **kwargs)
            except httpx2.ReadTimeout:
                raise EndpointSilent(request, request.extensions["timeout"]["read"]) from None
            finally:
                with _outstanding_lock:
                    _outstanding.pop(key, None)


def endpoint_failure(e: BaseException) -> str | None:
    """The one line for a model endpoint that failed (cannot connect, silent, error status);
    None for anything else."""
    if not isinstance(e, openai.APIError):
        return None
    request = getattr(e, "request", None)
    url = str(request.url) if request is not None else "(unknown)"
    silent = e if isinstance(e, EndpointSilent) else e.__cause__  # langchain-openai rewraps it
    if isinstance(silent, EndpointSilent):
        return f"the LLM endpoint {url} {silent.message} (DEEPSIFT_LLM_TIMEOUT)"
    if isinstance(e, openai.APIConnectionError):
        return f"cannot reach the LLM endpoint {url}: {e}; check DEEPSIFT_LLM_BASE_URL"
    if isinstance(e, openai.APIStatusError):
        return f"the LLM endpoint {url} answered {e.status_code}: {e.message}"
    return None
