"""A report's versions in its thread: each rewrite's number taken under a lock (two rewrites
never share one, across threads and processes), at most max_report_versions kept (the oldest
rewrites dropped first, with a note), and only the thread's latest checkpoint kept, since each
saves the whole state again."""

import fcntl
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.sqlite import SqliteSaver

from deepsift.records import FollowUp


@contextmanager
def numbering(checkpoints: Path) -> Iterator[None]:
    """Held while a version's number is taken and saved: a lock on a file beside the
    checkpoints, which threads (each opens it anew) and processes alike wait for."""
    with open(checkpoints.with_name(checkpoints.name + ".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield  # closing the file releases the lock


def numbered(followups: list[FollowUp]) -> list[tuple[int, FollowUp]]:
    """The report versions among `followups` and their numbers (the run's own report is 1;
    records saved before versions were numbered count in order)."""
    versions, last = [], 1
    for record in followups:
        if record.kind == "report":
            last = record.version or last + 1
            versions.append((last, record))
    return versions


def with_version(
    followups: list[FollowUp], record: FollowUp, most: int
) -> tuple[list[FollowUp], str]:
    """`followups` with `record` numbered after the last version and added, less the oldest
    rewrites past `most` versions (the run's own report counts, and stays); the note that says
    so, "" when none was dropped."""
    if record.kind != "report":
        return [*followups, record], ""
    versions = numbered(followups)
    number = max((n for n, _ in versions), default=1) + 1
    added = [*followups, record.model_copy(update={"version": number})]
    dropped = {id(r) for _, r in numbered(added)[: max(len(versions) + 2 - most, 0)]}
    if not dropped:
        return added, ""
    note = (
        f"the oldest report versions were dropped: a thread keeps {most} (the run's own and "
        "the latest rewrites); raise DEEPSIFT_MAX_REPORT_VERSIONS to keep more"
    )
    return [r for r in added if id(r) not in dropped], note


def keep_latest_checkpoint(saver: BaseCheckpointSaver, thread_id: str) -> None:
    """Drop the thread's earlier checkpoints: a finished run resumes from its latest only."""
    if not isinstance(saver, SqliteSaver):
        return
    latest = saver.get_tuple({"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}})
    if latest is None:
        return
    kept = latest.config["configurable"]["checkpoint_id"]
    with saver.cursor() as cursor:
        for table in ("checkpoints", "writes"):
            cursor.execute(
                f"DELETE FROM {table} WHERE thread_id = ? AND checkpoint_id != ?",  # noqa: S608
                (thread_id, kept),
            )
