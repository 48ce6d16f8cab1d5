"""A loopback HTTP server speaking the OpenAI chat-completions protocol, with scripted replies."""

import json
import os
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Responder = Callable[[dict[str, Any]], Any]
FAILURES = ("500", "close", "silent")  # how a dead endpoint fails: error status, hang-up, silence


class _Server(ThreadingHTTPServer):
    # The stdlib's backlog of 5 drops connections when many questions call at once (benchmarks).
    request_queue_size = 128


class FakeOpenAI:
    """Replies come from `responder(request_body)`: a str is sent as is; anything else is sent as
    JSON, and must then satisfy the request's json_schema (required keys), as a real one would.

    `dies_at(request_body)`: the endpoint dies at the first chat request for which it is true,
    and stays dead, failing every chat request after as `failure` says (FAILURES); `refused`
    counts those. `requests` holds only the requests it lived to answer."""

    def __init__(
        self,
        responder: Responder,
        delay: float = 0.0,
        dies_at: Callable[[dict[str, Any]], bool] | None = None,
        failure: str = "500",
    ) -> None:
        assert failure in FAILURES, failure
        self.responder = responder
        self.delay = delay
        self.dies_at = dies_at
        self.failure = failure
        self.dead = False
        self.refused = 0
        self._stopped = threading.Event()
        self.requests: list[dict[str, Any]] = []
        self.intervals: list[tuple[float, float]] = []  # (start, end) of each reply, monotonic
        self._lock = threading.Lock()
        self._last_prompt = ""
        self._server = _Server(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> "FakeOpenAI":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopped.set()  # releases the requests a silent endpoint holds
        self._server.shutdown()
        self._server.server_close()

    def _dies(self, body: dict[str, Any]) -> bool:
        with self._lock:
            self.dead = self.dead or bool(self.dies_at and self.dies_at(body))
            self.refused += self.dead
            return self.dead

    def _reply(self, body: dict[str, Any]) -> dict[str, Any]:
        started = time.monotonic()
        with self._lock:
            self.requests.append(body)
        time.sleep(self.delay)
        answer = self.responder(body)
        with self._lock:
            self.intervals.append((started, time.monotonic()))
        if not isinstance(answer, str):
            _check_schema(answer, body)
            answer = json.dumps(answer)
        prompt = " ".join(str(m.get("content", "")) for m in body.get("messages", []))
        with self._lock:  # a prompt cache of one entry, as a one-slot llama.cpp server keeps
            cached = len(os.path.commonprefix([prompt, self._last_prompt]))
            self._last_prompt = prompt
        limit = body.get("max_completion_tokens") or body.get("max_tokens")
        cut = limit is not None and len(answer) // 4 >= limit
        return {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "fake"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": answer},
                    "finish_reason": "length" if cut else "stop",
                }
            ],
            "usage": {
                "prompt_tokens": len(prompt) // 4,
                "completion_tokens": len(answer) // 4,
                "total_tokens": (len(prompt) + len(answer)) // 4,
                "prompt_tokens_details": {"cached_tokens": cached // 4},
            },
        }

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (the stdlib's name)
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length))
                if self.path.endswith("/embeddings"):
                    self._send(200, _embeddings(body))
                    return
                if not self.path.endswith("/chat/completions"):
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                if fake._dies(body):
                    self._die()
                    return
                try:
                    reply = fake._reply(body)
                except (
                    Exception
                ) as e:  # a scripted failure, or a test's assertion about the request
                    self._send(500, {"error": {"message": f"{type(e).__name__}: {e}"}})
                    return
                self._send(200, reply)

            def _die(self) -> None:
                if fake.failure == "silent":
                    fake._stopped.wait()
                elif fake.failure == "500":
                    self._send(500, {"error": {"message": "the endpoint died"}})
                self.close_connection = True  # "close", and after silence: hang up

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        return Handler


def _embeddings(body: dict[str, Any]) -> dict[str, Any]:
    """8-d vectors from letter counts: similar texts get similar vectors."""
    texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
    data = []
    for n, text in enumerate(texts):
        counts = [float(str(text).lower().count(letter)) + 0.01 for letter in "aeioustnr"[:8]]
        norm = sum(c * c for c in counts) ** 0.5
        data.append({"object": "embedding", "index": n, "embedding": [c / norm for c in counts]})
    return {"object": "list", "data": data, "model": body.get("model", "fake"), "usage": {}}


def schema_name(body: dict[str, Any]) -> str | None:
    response_format = body.get("response_format") or {}
    return (response_format.get("json_schema") or {}).get("name")


def _check_schema(answer: Any, body: dict[str, Any]) -> None:
    schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("schema")
    if schema is None:
        raise AssertionError("a JSON reply was scripted for a request without json_schema")
    missing = [key for key in schema.get("required", []) if key not in answer]
    if missing:
        raise AssertionError(
            f"scripted reply misses required keys {missing} of {schema_name(body)}"
        )


def last_user_text(body: dict[str, Any]) -> str:
    return next(
        (m["content"] for m in reversed(body["messages"]) if m["role"] in ("user", "human")), ""
    )
