"""Run agents over a benchmark and keep one JSON line per (agent, max_iterations, question).

Results are appended as each question finishes, so an interrupted run keeps what it did and a
rerun with the same output folder answers only what is missing.

One deepsift run with max_iterations=N also yields the results for 1..N (an agent with a
`round_end`): the graph is deterministic up to round r whatever the bound, so the state after
round r (its chunks and its usage) is exactly what a run bounded at r would have ended with.
The max_iterations column holds each agent's own bound: Search-o1's `max_searches`, ReAct's
`max_steps`.
"""

import hashlib
import json
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel

from deepsift.agents import AGENTS, Agent
from deepsift.config import Settings
from deepsift.deps import Deps
from deepsift.errors import UserError
from deepsift.eval import NAIVE
from deepsift.eval.datasets import EvalQuestion
from deepsift.eval.folders import DOCUMENT_DEPTH, ranked_documents
from deepsift.eval.metrics import all_found, exact_match, recall_at_k, token_f1
from deepsift.llm.structured import ask_structured
from deepsift.prompts import judge as judge_prompt
from deepsift.records import Chunk, Usage
from deepsift.report.writing.short_answer import short_answer
from deepsift.retrieval.ranking import ranked
from deepsift.retrieval.search import hybrid_search
from deepsift.store import Store, StoredChunk

Mode = Literal["retrieval", "answers"]
RANKING_DEPTH = 10
EMBED_BATCH = 256


@dataclass
class Outcome:
    """What one agent produced for one question when bounded at `max_iterations` rounds."""

    max_iterations: int
    chunks: list[Chunk]
    rounds: int
    usage: Usage
    seconds: float
    answer: str = ""
    queries: list[str] = field(default_factory=list)  # the sub-queries searched
    answered_by: str = ""  # the path that answered, for react and search-o1 (see api.py)


def corpus_store(settings: Settings) -> Store:
    """The evaluation corpora's own Milvus Lite file, data_dir/eval/milvus.db: apart from the
    user's collections (research never routes to them) and kept between eval runs."""
    path = settings.data_dir / "eval" / "milvus.db"
    return Store(settings.model_copy(update={"milvus_uri": str(path), "milvus_token": ""}))


def corpus_collection(
    questions: list[EvalQuestion],
    digest: str,
    label: str,
    deps: Deps,
    on_progress: Callable[[int, int], None] = lambda done, total: None,
) -> str:
    """One chunk per context paragraph of the whole dataset, built once per dataset file.

    The collection's description is written last, so an interrupted build is recognised
    (empty description) and rebuilt rather than used half-filled.
    """
    # One corpus per dataset and embedder: a collection holds one model's vectors.
    name = f"eval_{hashlib.sha256(f'{digest}:{deps.embedder.name}'.encode()).hexdigest()[:12]}"
    store = deps.store
    if store.exists(name) and store.description(name):
        store.check_embedder(name, deps.embedder)
        return name
    if store.exists(name):
        store.drop(name)
    store.ensure(name, "", deps.embedder)
    paragraphs = list(dict.fromkeys(p for q in questions for p in q.paragraphs))
    for start in range(0, len(paragraphs), EMBED_BATCH):
        batch = paragraphs[start : start + EMBED_BATCH]
        texts = [f"{title}\n\n{text}" for title, text in batch]
        chunks = [
            StoredChunk(
                id=hashlib.sha256(text.encode()).hexdigest()[:32],
                text=text,
                vector=vector,
                source=f"{label}#{title}",
                title=title,
                position=0,
                doc_hash=digest[:64],
            )
            for (title, _), text, vector in zip(
                batch, texts, deps.embedder.embed(texts), strict=True
            )
        ]
        store.add_chunks(name, chunks)
        on_progress(min(start + EMBED_BATCH, len(paragraphs)), len(paragraphs))
    store.flush(name)
    store.ensure(name, f"{label}: {len(paragraphs)} context paragraphs", deps.embedder)
    return name


class Verdict(BaseModel):
    correct: bool


def judge(deps: Deps, question: EvalQuestion, prediction: str) -> tuple[bool | None, Usage]:
    messages = [
        SystemMessage(judge_prompt.SYSTEM),
        HumanMessage(
            judge_prompt.USER.format(
                question=question.question, gold=question.answer, prediction=prediction
            )
        ),
    ]
    verdict, usage = ask_structured(deps.llm, messages, Verdict)
    return (verdict.correct if verdict else None), usage


class Evaluator:
    """Runs the agents on questions against one collection, in retrieval or answer mode, each
    agent bounded as `bounds` says (by its bound's name: max_iterations, max_searches, ...)."""

    def __init__(
        self,
        deps: Deps,
        collection: str,
        mode: Mode,
        bounds: dict[str, int],
        naive_depth: int = RANKING_DEPTH,
    ) -> None:
        self.deps = deps
        self.collection = collection
        self.mode = mode
        self.bounds = bounds
        self.naive_depth = naive_depth  # chunks of the one search (a folder's: enough documents)
        self._graphs: dict[str, Any] = {}

    def run(self, name: str, question: EvalQuestion) -> Iterator[Outcome]:
        if name == NAIVE:
            return self.naive(question)
        agent = AGENTS[name]
        if name not in self._graphs:
            finish = "answer" if self.mode == "answers" else "retrieval"
            self._graphs[name] = agent.build(self.deps, None, finish)
        if agent.round_end:
            return self._by_round(agent, self._graphs[name], question)
        return self._to_the_end(agent, self._graphs[name], question)

    def naive(self, question: EvalQuestion) -> Iterator[Outcome]:
        """One hybrid search with the question as asked (and, for answers, one answer call)."""
        started = time.monotonic()
        hits = hybrid_search(question.question, self.collection, self.deps, self.naive_depth)
        usage, prediction = Usage(), ""
        if self.mode == "answers":
            shown = {c.id: c for c in hits[:RANKING_DEPTH]}
            update = short_answer({"question": question.question, "chunks": shown}, self.deps)
            usage, prediction = update["usage"], update["answer"]
        yield Outcome(0, hits, 1, usage, time.monotonic() - started, prediction)

    def _by_round(self, agent: Agent, graph: Any, question: EvalQuestion) -> Iterator[Outcome]:
        """The agent bounded at its bound N, reported as if bounded at each of 1..N (answers:
        at N alone)."""
        started = time.monotonic()
        bound = self.bounds[agent.bound]
        run_input = {
            "question": question.question,
            "sources_to_search": [self.collection],
            agent.bound: bound,
        }
        config = {"recursion_limit": agent.step_limit(bound)}
        # The state right after each round's last step: what a run bounded there ends with
        # (a bounded run skips that round's reflection).
        after_round: dict[int, dict[str, Any]] = {}
        state: dict[str, Any] = {}
        ran: set[str] = set()
        for mode, chunk in graph.stream(run_input, config, stream_mode=["updates", "values"]):
            if mode == "updates":
                ran.update(chunk)
                continue
            state = chunk
            if agent.round_end in ran:
                after_round[state["iteration"]] = {**state, "seconds": time.monotonic() - started}
            ran.clear()
        last = max(after_round)
        # An answer exists only at the end of the run, so answers are scored at the bound alone.
        first = bound if self.mode == "answers" else 1
        for bounded in range(first, bound + 1):
            # Past the round where reflection said "enough", a run bounded there would have
            # made that reflection too: it ends as the whole run did.
            final = bounded == bound or bounded > last
            snapshot = state if final else after_round[bounded]
            yield Outcome(
                bounded,
                ranked(snapshot),
                min(bounded, last),
                snapshot.get("usage") or Usage(),
                time.monotonic() - started if final else snapshot["seconds"],
                state.get("answer", "") if bounded == bound else "",
                snapshot.get("sub_queries", []),
            )

    def _to_the_end(self, agent: Agent, graph: Any, question: EvalQuestion) -> Iterator[Outcome]:
        """The agent run to its end at its bound; for retrieval it was built to stop before
        its answer and report."""
        started = time.monotonic()
        bound = self.bounds[agent.bound]
        run_input = {
            "agent": agent.name,
            "question": question.question,
            "sources_to_search": [self.collection],
            agent.bound: bound,
        }
        config = {"recursion_limit": agent.step_limit(bound)}
        state: dict[str, Any] = {}
        for latest in graph.stream(run_input, config, stream_mode="values"):
            state = latest
        yield Outcome(
            bound,
            ranked(state),
            state.get("iteration", 0),
            state.get("usage") or Usage(),
            time.monotonic() - started,
            state.get("answer", ""),
            state.get("sub_queries", []),
            state.get("answered_by", ""),
        )


def record(
    agent: str,
    question: EvalQuestion,
    outcome: Outcome,
    mode: Mode,
    judged: bool | None = None,
    corpus: Path | None = None,
) -> dict[str, Any]:
    """One results row. Over a folder (`corpus`), scored by documents: the distinct files of
    the ranking against the gold files; else by the titles of the first chunks."""
    if corpus is not None:
        ranked_names = ranked_documents(outcome.chunks, corpus)[:DOCUMENT_DEPTH]
        gold = question.gold_sources
        scored = {"gold_sources": gold, "ranked_sources": ranked_names}
    else:
        ranked_names = [chunk.title for chunk in outcome.chunks][:RANKING_DEPTH]
        gold = question.gold_titles
        scored = {"gold_titles": gold, "ranked_titles": ranked_names}
    row: dict[str, Any] = {
        "agent": agent,
        "max_iterations": outcome.max_iterations,
        "id": question.id,
        "kind": question.kind,
        **scored,
        "rounds": outcome.rounds,
        "queries": outcome.queries,
        **outcome.usage.model_dump(),
        "seconds": round(outcome.seconds, 2),
        "error": None,
    }
    for k in (2, 5, 10):
        row[f"recall@{k}"] = recall_at_k(ranked_names, gold, k)
    row["all@10"] = all_found(ranked_names, gold, 10)
    if mode == "answers":
        row.update(
            prediction=outcome.answer,
            answer=question.answer,
            em=exact_match(outcome.answer, question.answer),
            f1=token_f1(outcome.answer, question.answer),
            judge=judged,
        )
        if outcome.answered_by:
            row["answered_by"] = outcome.answered_by
    return row


def bounds(name: str, mode: Mode, bounds: dict[str, int]) -> list[int]:
    """The max_iterations column of the rows one question gets from the agent `name`."""
    if name == NAIVE:
        return [0]
    agent = AGENTS[name]
    bound = bounds[agent.bound]
    first = 1 if agent.round_end and mode == "retrieval" else bound
    return list(range(first, bound + 1))


def failed(agent: str, question: EvalQuestion, bounds: list[int], error: Exception) -> list[dict]:
    message = f"{type(error).__name__}: {error}".splitlines()[0][:300]
    return [
        {"agent": agent, "max_iterations": bound, "id": question.id, "error": message}
        for bound in bounds
    ]


class ResultsFile:
    """results.jsonl in the output folder: what is done, and appending what gets done.

    A question is done for an agent when its rows hold every bound in `expected[agent]` once and
    no error. On opening, the rows of questions not done (failed, or cut short by a kill) are
    dropped from the file, so those run again and every result appears exactly once."""

    def __init__(
        self, out: Path, identity: dict[str, Any], expected: dict[str, list[int]] | None = None
    ) -> None:
        out.mkdir(parents=True, exist_ok=True)
        self.path = out / "results.jsonl"
        meta = out / "run.json"
        if meta.exists():
            previous = json.loads(meta.read_text())
            if previous != identity:
                raise UserError(
                    f"{out} holds results of another evaluation ({previous}); choose another --out"
                )
        else:
            _replace(meta, json.dumps(identity, indent=2))
        self.rows = self._done_rows(expected or {})
        self.done = {(r["agent"], r["id"]) for r in self.rows}

    def _done_rows(self, expected: dict[str, list[int]]) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        lines = self.path.read_text().splitlines()
        questions: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for line in lines:
            try:
                row = json.loads(line)
            except json.JSONDecodeError:  # a line cut short by a kill
                continue
            questions.setdefault((row["agent"], row["id"]), []).append(row)
        rows = [
            row
            for (agent, _), group in questions.items()
            if _complete(group, expected.get(agent))
            for row in group
        ]
        if len(rows) < len(lines):
            _replace(self.path, "".join(json.dumps(row) + "\n" for row in rows))
        return rows

    def add(self, rows: list[dict[str, Any]]) -> None:
        with self.path.open("a") as handle:  # a kill that splits the write is undone on opening
            handle.write("".join(json.dumps(row) + "\n" for row in rows))
        self.rows += rows
        self.done.update((r["agent"], r["id"]) for r in rows)


def _complete(rows: list[dict[str, Any]], expected: list[int] | None) -> bool:
    """One question's rows for one agent: none failed, and every bound once (when known)."""
    if any(row.get("error") is not None for row in rows):
        return False
    return expected is None or sorted(row["max_iterations"] for row in rows) == expected


def _replace(path: Path, text: str) -> None:
    """Write `text` to `path` whole or not at all: a kill midway leaves the old file."""
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(text)
    os.replace(temporary, path)
