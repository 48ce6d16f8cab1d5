"""Batch research throughput, or its memory, against a loopback OpenAI-compatible server.

Throughput: 32 questions at concurrency 1, 4 and 16 with a fixed delay per reply: questions per
minute, the speed-up over concurrency 1, and how many embedding requests the shared EmbedBatcher
served per model call. When the server's delay dominates, concurrency C should approach a C-fold
speed-up.

Memory (--memory N): one `deepsift batch` process of N questions against a scripted server with
no delay; its RSS (Milvus Lite's server runs inside it) as answers arrive. A long batch must
hold its memory flat: the end within 200 MB of where it stood after the first 20 questions.

    python benchmarks/batch.py [--delay 0.5] [--questions 32] [--agent deepsift|search-o1]
    python benchmarks/batch.py --memory 500 [--concurrency 4]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import print_table, save

from deepsift import Settings
from deepsift.api.batch import BatchQuestion, run_batch
from deepsift.deps import Deps
from deepsift.ingest.pipeline import ingest
from deepsift.llm.chat import chat_model
from deepsift.llm.embed_batcher import EmbedBatcher
from deepsift.llm.embedders import get_embedder
from deepsift.store import Store

from fake_openai import FakeOpenAI
from scripted import ScriptedResearcher, ScriptedSearchO1

CORPUS = Path(__file__).parent.parent / "examples" / "corpus"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--delay", type=float, default=0.5, help="seconds per LLM reply")
    parser.add_argument("--questions", type=int, default=32)
    parser.add_argument("--agent", choices=["deepsift", "search-o1"], default="deepsift")
    parser.add_argument("--concurrency", default="1,4,16")
    parser.add_argument("--memory", type=int, metavar="N", help="RSS over a batch of N questions")
    args = parser.parse_args()
    if args.memory:
        memory(args.memory, 4 if "," in args.concurrency else int(args.concurrency))
        return
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


def memory(count: int, concurrency: int) -> None:
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAI(ScriptedResearcher()) as server:
        env = {
            "PATH": os.environ["PATH"],
            "HOME": tmp,
            "DEEPSIFT_DATA_DIR": f"{tmp}/data",
            "DEEPSIFT_LLM_BASE_URL": server.url,
            "DEEPSIFT_LLM_API_KEY": "k",
            "DEEPSIFT_MAX_ITERATIONS": "1",  # one round and a brief report: many questions
            "DEEPSIFT_REPORT_LENGTH": "brief",
        }
        deepsift = [sys.executable, "-m", "deepsift"]
        ingest_science = [*deepsift, "ingest", str(CORPUS / "science"), "--collection", "science"]
        subprocess.run(ingest_science, env=env, check=True, capture_output=True)
        questions, answers = Path(tmp) / "q.jsonl", Path(tmp) / "a.jsonl"
        questions.write_text(
            "".join(
                json.dumps({"id": f"q{n}", "question": f"Question {n}: what did Kestrel cost?"})
                + "\n"
                for n in range(count)
            )
        )
        batch = [*deepsift, "batch", str(questions), "-o", str(answers)]
        started = time.monotonic()
        process = subprocess.Popen(
            [*batch, "--concurrency", str(concurrency)], env=env, stderr=subprocess.DEVNULL
        )
        samples: dict[int, float] = {}  # answered -> RSS in MiB
        while process.poll() is None:
            answered = answers.read_text().count("\n") if answers.exists() else 0
            if answered not in samples:
                samples[answered] = _rss_mib(process.pid)
            time.sleep(0.05)
        seconds = time.monotonic() - started
    marks = sorted({m for m in (1, 20, 50, 100, 200, 300, 400, 500, 1000, count) if m <= count})
    rows = []
    for mark in marks:
        answered = min((n for n in samples if n >= mark), default=max(samples))
        rows.append({"answered": answered, "rss_mib": samples[answered]})
    base = next(r for r in rows if r["answered"] >= 20)
    for row in rows:
        row["since_20_mib"] = row["rss_mib"] - base["rss_mib"]
    print(f"batch.py --memory  ({count} questions, concurrency {concurrency}, {seconds:.0f} s)")
    print_table(rows)
    growth = rows[-1]["since_20_mib"]
    kib = growth * 1024 / max(1, rows[-1]["answered"] - base["answered"])
    verdict = "flat" if growth <= 200 else "GROWS"
    print(f"{verdict}: {growth:+.0f} MiB after question 20 ({kib:+.0f} KiB a question)")
    print(f"wrote {save('batch-memory', rows)}")


def _rss_mib(pid: int) -> float:
    """Resident memory of a live process, from /proc (0 once it has ended)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0.0
    return next(
        (int(line.split()[1]) / 1024 for line in status.splitlines() if line.startswith("VmRSS")),
        0.0,
    )


if __name__ == "__main__":
    main()
