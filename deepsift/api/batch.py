"""Research many questions at once: `deepsift batch QUESTIONS.jsonl -o ANSWERS.jsonl`.

Each output line is the research result of one question plus its `id` and `error` (null, or
what went wrong). Lines are appended as questions finish, so a stopped batch keeps its answers;
a rerun with the same output answers only the ids that have no answer yet (failed ones again).
Questions run concurrently and share one store, one chat client and one embedder whose requests
are served together (EmbedBatcher).
"""

import json
import os
import stat
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from deepsift.api import research
from deepsift.config import Settings
from deepsift.deps import Deps
from deepsift.errors import UserError
from deepsift.llm.chat import chat_model
from deepsift.llm.embed_batcher import EmbedBatcher
from deepsift.llm.embedders import get_embedder
from deepsift.retrieval.sources import resolve_sources
from deepsift.store import Store


@dataclass
class BatchQuestion:
    id: str
    question: str


def read_questions(path: Path) -> list[BatchQuestion]:
    """Every line {"id", "question"}; a bad line is an error naming the file and line."""
    try:
        data = path.read_bytes()
    except OSError as e:
        raise UserError(f"cannot read {path}: {e.strerror}") from e
    try:
        lines = data.decode("utf-8").splitlines()
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise UserError(
            f"{path}:{line} is not UTF-8 (byte {e.start}); save the file as UTF-8"
        ) from None
    questions: list[BatchQuestion] = []
    seen: set[str] = set()
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as e:
            raise UserError(f"{path}:{number} is not JSON ({e.msg})") from e
        if not isinstance(item, dict) or not str(item.get("question") or "").strip():
            raise UserError(f'{path}:{number} needs a "question" (and an "id")')
        if "id" not in item:
            raise UserError(f'{path}:{number} has no "id"')
        key = str(item["id"])
        if key in seen:
            raise UserError(f"{path}:{number} repeats id {key!r}; ids must be unique")
        seen.add(key)
        questions.append(BatchQuestion(key, str(item["question"])))
    if not questions:
        raise UserError(f"{path} holds no questions")
    return questions


def answered_ids(output: Path) -> set[str]:
    """Ids with an answer in `output`. Lines of failed questions and a line cut short by a kill
    are dropped from the file (rewritten whole, then swapped in), so those questions run again."""
    if not output.exists():
        return set()
    lines = output.read_text(encoding="utf-8").splitlines()
    kept, done = [], set()
    for line in lines:
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(row, dict) and row.get("error") is None and "id" in row:
            kept.append(line)
            done.add(str(row["id"]))
    if len(kept) == len(lines):
        return done  # nothing to drop: the file stays as it is
    temporary = output.with_name(output.name + ".tmp")
    temporary.write_text("".join(f"{line}\n" for line in kept), encoding="utf-8")
    temporary.chmod(stat.S_IMODE(output.stat().st_mode))  # a shared file stays shared
    os.replace(temporary, output)
    return done


ProgressHandler = Callable[[str, str | None], None]  # (id, error or None) as each one finishes


def run_batch(
    questions: list[BatchQuestion],
    output: Path,
    settings: Settings,
    *,
    agent: str = "deepsift",
    concurrency: int = 4,
    collections: list[str] | None = None,
    on_done: ProgressHandler = lambda qid, error: None,
    deps: Deps | None = None,
) -> None:
    """Answer `questions` (those not in `output` yet), `concurrency` at a time."""
    own_store = deps is None
    if deps is None:
        embedder = EmbedBatcher(get_embedder(settings))
        deps = Deps(settings, Store(settings), embedder, chat_model(settings))
    lock = threading.Lock()
    output.parent.mkdir(parents=True, exist_ok=True)

    def answer(item: BatchQuestion) -> None:
        try:
            result = research(
                item.question,
                settings,
                agent=agent,
                collections=collections,
                deps=deps,
                checkpoints=False,
            )
            row: dict[str, Any] = {"id": item.id, **result.model_dump(), "error": None}
        except Exception as e:  # one question's failure is a line in the output, not the end
            message = f"{type(e).__name__}: {e}".splitlines()[0][:300]
            row = {"id": item.id, "question": item.question, "error": message}
        with lock, output.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
        on_done(item.id, row["error"])

    try:
        resolve_sources(deps, collections)  # a bad source fails the batch, not each question
        with ThreadPoolExecutor(max_workers=concurrency) as pool:
            futures = [pool.submit(answer, item) for item in questions]
            try:
                for future in futures:
                    future.result()
            except KeyboardInterrupt:
                pool.shutdown(wait=True, cancel_futures=True)  # finish the ones in flight
                raise
    finally:
        if own_store:
            deps.store.close()
