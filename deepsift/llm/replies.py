"""The model replies a checkpointed run has received, kept until the run finishes.

A checkpoint is written when a graph step ends. A step that makes several calls (synthesize
writes its sections concurrently, then the frame) and fails part way would ask them all again on
resume; with these kept, a resumed step gets the replies it already paid for from disk, and the
run's usage still counts them (their token counts are kept with them).
"""

import hashlib
import json
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from langchain_core.caches import BaseCache
from langchain_core.messages import message_to_dict, messages_from_dict
from langchain_core.outputs import ChatGeneration, Generation

_thread: ContextVar[str | None] = ContextVar("deepsift_replies_thread", default=None)


@contextmanager
def kept_for(thread_id: str) -> Iterator[None]:
    """Within this block (and the graph steps it runs), replies are kept under `thread_id`."""
    token = _thread.set(thread_id)
    try:
        yield
    finally:
        _thread.reset(token)


class RunReplies(BaseCache):
    """A langchain chat-model cache that answers only inside `kept_for(thread_id)`, from the
    replies of that thread; elsewhere (batch, notebooks) every call goes to the model."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._db: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    def _connection(self) -> sqlite3.Connection:
        if self._db is None:  # opened on first use: most chat models never keep a reply
            self._path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self._path, check_same_thread=False)
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS replies "
                "(thread TEXT, request TEXT, reply TEXT, PRIMARY KEY (thread, request))"
            )
        return self._db

    def lookup(self, prompt: str, llm_string: str) -> Sequence[Generation] | None:
        thread = _thread.get()
        if thread is None:
            return None
        with self._lock:
            row = (
                self._connection()
                .execute(
                    "SELECT reply FROM replies WHERE thread = ? AND request = ?",
                    (thread, _key(prompt, llm_string)),
                )
                .fetchone()
            )
        if row is None:
            return None
        return [ChatGeneration(message=m) for m in messages_from_dict(json.loads(row[0]))]

    def update(self, prompt: str, llm_string: str, return_val: Sequence[Generation]) -> None:
        thread = _thread.get()
        if thread is None:
            return
        with self._lock, self._connection() as db:
            db.execute(
                "INSERT OR REPLACE INTO replies VALUES (?, ?, ?)",
                (thread, _key(prompt, llm_string), json.dumps(_messages(return_val))),
            )

    def forget(self, thread_id: str) -> None:
        """Drop a finished run's replies."""
        if self._db is None and not self._path.exists():
            return
        with self._lock, self._connection() as db:
            db.execute("DELETE FROM replies WHERE thread = ?", (thread_id,))

    def clear(self, **kwargs: Any) -> None:
        with self._lock, self._connection() as db:
            db.execute("DELETE FROM replies")


def _messages(generations: Sequence[Generation]) -> list[dict]:
    """The reply messages, with their token counts (usage_metadata)."""
    return [message_to_dict(g.message) for g in generations if isinstance(g, ChatGeneration)]


def _key(prompt: str, llm_string: str) -> str:
    """The request: its messages and call parameters (schema, max_tokens), not the model's
    endpoint or name, so a run resumed against another endpoint still finds its replies."""
    parameters = llm_string.rpartition("---")[2]
    return hashlib.sha256(f"{parameters}\x00{prompt}".encode()).hexdigest()
