"""Batch research throughput against a loopback OpenAI-compatible server with a fixed delay.

32 questions at concurrency 1, 4 and 16: questions per minute, the speed-up over concurrency 1,
and how many embedding requests the shared EmbedBatcher served per model call. When the server's
delay dominates, concurrency C should approach a C-fold speed-up.

    python benchmarks/batch.py [--delay 0.5] [--questions 32] [--agent deepsift|search-o1]
"""

import argparse
import json
import tempfile
import time
from pathlib import Path

from _common import print_table, save

from deepsift import Settings
from deepsift.batch import BatchQuestion, run_batch
from deepsift.deps import Deps
from deepsift.embed_batcher import EmbedBatcher
from deepsift.ingest.pipeline import ingest
from deepsift.models import chat_model, get_embedder
from deepsift.store import Store

from fake_openai import FakeOpenAI
from scripted import ScriptedSearchO1

CORPUS = Path(__file__).parent.parent / "examples" / "corpus"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--delay", type=float, default=0.5, help="seconds per LLM reply")
    parser.add_argument("--questions", type=int, default=32)
    parser.add_argument("--agent", choices=["deepsift", "search-o1"], default="deepsift")
    parser.add_argument("--concurrency", default="1,4,16")
    args = parser.parse_args()
    questions = [
        BatchQuestion(f"q{n}", f"Question {n}: what did Kestrel Works cost, and why?")
        for n in range(args.questions)
    ]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(data_dir=Path(tmp))
        store = Store(settings)
        ingest([CORPUS / "science"], "science", store, get_embedder(settings), settings)
        # Reasoning asks two queries, then answers; the deepsift calls are scripted as in tests.
        with FakeOpenAI(
            ScriptedSearchO1(["Kestrel Works cost", "Kestrel Works purpose"]), delay=args.delay
        ) as server:
            run_settings = settings.model_copy(
                update={"llm_base_url": server.url, "llm_api_key": "k", "max_iterations": 1}
            )
            base = None
            for concurrency in map(int, args.concurrency.split(",")):
                embedder = EmbedBatcher(get_embedder(run_settings))
                deps = Deps(run_settings, store, embedder, chat_model(run_settings))
                output = Path(tmp) / f"answers-{concurrency}.jsonl"
                calls = len(server.requests)
                started = time.monotonic()
                run_batch(
                    questions,
                    output,
                    run_settings,
                    agent=args.agent,
                    concurrency=concurrency,
                    deps=deps,
                )
                seconds = time.monotonic() - started
                lines = [json.loads(line) for line in output.read_text().splitlines()]
                answered = sum(line["error"] is None for line in lines)
                per_minute = answered * 60 / seconds
                base = base or per_minute
                rows.append(
                    {
                        "agent": args.agent,
                        "concurrency": concurrency,
                        "answered": answered,
                        "failed": len(lines) - answered,
                        "llm_calls": len(server.requests) - calls,
                        "wall_s": seconds,
                        "questions_per_min": per_minute,
                        "speedup": per_minute / base,
                        "embed_requests": embedder.requests,
                        "embed_model_calls": embedder.model_calls,
                    }
                )
        store.close()
    print(f"batch.py  ({args.delay * 1000:.0f} ms per LLM reply, {args.questions} questions)")
    print_table(rows)
    print(f"wrote {save(f'batch-{args.agent}', rows)}")


if __name__ == "__main__":
    main()
