"""Research latency against a loopback OpenAI-compatible server that answers after a fixed delay.

Counts the sequential LLM rounds on the critical path (requests that overlap in time are one
round) and compares the wall time with rounds x delay: near 1 means the graph adds little
overhead and concurrent work (the report's sections) really overlaps.

    python benchmarks/latency.py [--delay 0.3] [--runs 3]
"""

import argparse
import tempfile
from pathlib import Path

from _common import print_table, save

from deepsift import Settings, research
from deepsift.ingest.pipeline import ingest
from deepsift.models import get_embedder
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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--delay", type=float, default=0.3, help="seconds per LLM reply")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
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
