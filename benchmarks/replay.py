"""Record every chat request a deepsift command makes, or replay a recording, to show that a
change of code leaves the reports as they were (or which request it changed).

    python benchmarks/replay.py record REPLIES.sqlite -- eval reports --corpus DIR ...
    python benchmarks/replay.py replay REPLIES.sqlite -- eval reports --corpus DIR ...
    python benchmarks/replay.py extend REPLIES.sqlite -- eval reports --corpus DIR ...

Both run the `deepsift` command in this process with the chat model's reply cache widened to
every call: `record` keeps each request (its messages and parameters) with its reply; `replay`
answers each request from the recording and lets the model answer only a request it has not
seen, which it prints (the nearest recorded request beside it, as a diff) and counts. Run
`record` with the base commit's code first on the PYTHONPATH (a worktree), `replay` with the
new code: identical reports with 0 new requests show a pure move. `extend` answers what the
recording holds and records what it does not: a change to the report's last steps is tried
again without waiting for the steps before them (their seconds are then not the model's).
"""

import difflib
import json
import sqlite3
import sys
import threading
from pathlib import Path

from deepsift.llm import replies
from deepsift.llm.replies import RunReplies

_TABLE = "CREATE TABLE IF NOT EXISTS calls (key TEXT PRIMARY KEY, request TEXT, reply TEXT)"


class Recording:
    def __init__(self, path: Path, mode: str) -> None:
        self.db = sqlite3.connect(path, check_same_thread=False)
        self.db.execute(_TABLE)
        self.mode, self.hits, self.new = mode, 0, 0
        self.lock = threading.Lock()

    def reply(self, key: str) -> str | None:
        row = self.db.execute("SELECT reply FROM calls WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def keep(self, key: str, request: str, reply: str) -> None:
        with self.db:
            self.db.execute("INSERT OR REPLACE INTO calls VALUES (?, ?, ?)", (key, request, reply))

    def show_new(self, request: str) -> None:
        known = [r for (r,) in self.db.execute("SELECT request FROM calls")]
        nearest = difflib.get_close_matches(request, known, n=1, cutoff=0.0)
        print(f"\n=== new request #{self.new} (not in the recording)", file=sys.stderr)
        if nearest:
            diff = difflib.unified_diff(
                nearest[0].splitlines(), request.splitlines(), "recorded", "now", lineterm="", n=1
            )
            print("\n".join(list(diff)[:80]), file=sys.stderr)


def _patch(recording: Recording) -> None:
    lookup, update = RunReplies.lookup, RunReplies.update

    def recorded_lookup(self, prompt, llm_string):
        if recording.mode in ("replay", "extend"):
            with recording.lock:
                kept = recording.reply(replies._key(prompt, llm_string))
                if kept is None:
                    recording.new += 1
                    if recording.mode == "replay":
                        recording.show_new(_request(prompt, llm_string))
                else:
                    recording.hits += 1
            if kept is not None:
                messages = replies.messages_from_dict(json.loads(kept))
                return [replies.ChatGeneration(message=m) for m in messages]
        return lookup(self, prompt, llm_string)

    def recording_update(self, prompt, llm_string, return_val):
        if recording.mode in ("record", "extend"):
            reply = json.dumps(replies._messages(return_val))
            with recording.lock:
                recording.keep(
                    replies._key(prompt, llm_string), _request(prompt, llm_string), reply
                )
        update(self, prompt, llm_string, return_val)

    RunReplies.lookup, RunReplies.update = recorded_lookup, recording_update


def _request(prompt: str, llm_string: str) -> str:
    """What the reply key hashes, readable: the call's parameters, then its messages."""
    return f"{llm_string.rpartition('---')[2]}\n{prompt}"


def main() -> None:
    mode, path, dash, *argv = sys.argv[1:]
    if mode not in ("record", "replay", "extend") or dash != "--":
        sys.exit(__doc__)
    recording = Recording(Path(path), mode)
    _patch(recording)
    from deepsift.cli import main as deepsift

    try:
        deepsift(argv)
    finally:
        print(
            f"replay.py {mode}: {recording.hits} requests answered from the recording, "
            f"{recording.new} new",
            file=sys.stderr,
        )


if __name__ == "__main__":
    main()
