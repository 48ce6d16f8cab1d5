"""Research latency against a loopback OpenAI-compatible server that answers after a fixed delay.

Counts the sequential LLM rounds on the critical path (requests that overlap in time are one
round) and compares the wall time with rounds x delay: near 1 means the graph adds little
overhead and concurrent work (the report's sections) really overlaps.

With --embedded, runs `make demo`'s research step on the embedded model instead (run it alone)
and prints where each run spends its seconds, calls and tokens, step by step, and the median.

    python benchmarks/latency.py [--delay 0.3] [--runs 3] [--embedded]
"""

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import DEMO_DESCRIPTIONS, DEMO_QUESTION, print_table, save

from deepsift import Settings, research
from deepsift.deps import Deps
from deepsift.ingest.pipeline import ingest
from deepsift.llm.chat import chat_model
from deepsift.llm.embedders import get_embedder
from deepsift.store import Store

from fake_openai import FakeOpenAI
from scripted import ScriptedResearcher

CORPUS = Path(__file__).parent.parent / "examples" / "corpus"
QUESTION = "Why was Kestrel Works built, what did it cost, and did phosphorus fall?"
SUB_QUERIES = [
    "Why was Kestrel Works built",
    "Kestrel Works approved budget",
    "Kestrel Works final cost",
    "phosphorus levels in Lake Veldmere after Kestrel Works",
]


def rounds(intervals: list[tuple[float, float]]) -> int:
    """Waves of overlapping requests, in time order."""
    count, wave_end = 0, float("-inf")
    for start, end in sorted(intervals):
        if start >= wave_end:
            count += 1
            wave_end = end
        else:
            wave_end = max(wave_end, end)
    return count


def embedded_demo(runs: int) -> None:
    """Each run in a fresh process, as `make demo` runs: no prompt cached by an earlier run."""
    rows = []
    for run in range(1, runs + 1):
        child = [sys.executable, __file__, "--embedded-run"]
        output = subprocess.run(child, capture_output=True, text=True, check=True).stdout
        rows += [{"run": run, **row} for row in json.loads(output.splitlines()[-1])]
    for row in rows:
        for field in ("cached_tokens", "report_words", "cited_documents", "documents"):
            row.setdefault(field, "")
    print_table(rows)
    totals = sorted((r for r in rows if r["step"] == "TOTAL (wall)"), key=lambda r: r["seconds"])
    print(f"median of {runs}: {totals[len(totals) // 2]['seconds']:.1f} s")
    print(f"wrote {save('latency_embedded', rows)}")


def embedded_run() -> None:
    """One demo run: ingest the sample corpus, research the demo question, print the rows."""
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(data_dir=Path(tmp))
        deps = Deps(settings, Store(settings), get_embedder(settings), chat_model(settings))
        for name, description in DEMO_DESCRIPTIONS.items():
            ingest([CORPUS / name], name, deps.store, deps.embedder, settings, description)
        result = research(DEMO_QUESTION, settings, max_iterations=2, deps=deps)
        deps.store.close()
    usage = result.usage
    rows = [{"step": step, **cost.model_dump()} for step, cost in usage.steps.items()]
    rows.append(
        {
            "step": "TOTAL (wall)",
            "seconds": usage.seconds,
            "llm_calls": usage.llm_calls,
            "prompt_tokens": usage.prompt_tokens,
            "completion_tokens": usage.completion_tokens,
            "cached_tokens": usage.cached_tokens,
            "report_words": len(result.report.split()),
            "cited_documents": len(result.sources),
            "documents": ", ".join(Path(s.source).name for s in result.sources),
        }
    )
    print(json.dumps(rows))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--delay", type=float, default=0.3, help="seconds per LLM reply")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--embedded", action="store_true", help="the demo, on the embedded model")
    parser.add_argument("--embedded-run", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.embedded_run:
        embedded_run()
        return
    if args.embedded:
        embedded_demo(args.runs)
        return
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(data_dir=Path(tmp))
        store = Store(settings)
        for name in ("science", "operations"):
            ingest([CORPUS / name], name, store, get_embedder(settings), settings, description=name)
        store.close()
        for follow_ups, label in (([], "1 round"), (["River Orrin phosphorus load"], "2 rounds")):
            for _ in range(args.runs):
                researcher = ScriptedResearcher(SUB_QUERIES, follow_ups)
                with FakeOpenAI(researcher, delay=args.delay) as server:
                    run_settings = settings.model_copy(
                        update={"llm_base_url": server.url, "llm_api_key": "k"}
                    )
                    result = research(QUESTION, run_settings, max_iterations=2)
                    waves = rounds(server.intervals)
                rows.append(
                    {
                        "search": label,
                        "sub_queries": len(result.sub_queries),
                        "llm_calls": result.usage.llm_calls,
                        "critical_rounds": waves,
                        "wall_s": result.usage.seconds,
                        "sequential_s": result.usage.llm_calls * args.delay,
                        "wall_over_rounds_x_delay": result.usage.seconds / (waves * args.delay),
                    }
                )
    print_table(rows)
    print(f"wrote {save('latency', rows)}")


if __name__ == "__main__":
    main()
