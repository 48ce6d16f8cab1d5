"""Routing without the model: how often a query's embedding similarity to the source
descriptions is decisive (the best leads the next by a margin), and how often that pick is one
the model would make.

Sources: the sample corpus's two collections (the demo's descriptions), a collection of
Wikipedia paragraphs, and the web. Queries: public 2WikiMultiHopQA and MuSiQue questions, and
questions about the sample corpus. The model routes them 4 to a call, as decompose yields them.
Run it alone: it runs the embedded model (or DEEPSIFT_LLM_BASE_URL's).

    python benchmarks/routing.py [--questions 30]
"""

import argparse
import tempfile
from pathlib import Path

from _common import DEMO_DESCRIPTIONS, print_table, save

from deepsift import Settings
from deepsift.deps import Deps
from deepsift.eval.datasets import load_dataset
from deepsift.llm.chat import chat_model
from deepsift.llm.embedders import get_embedder, similarities
from deepsift.retrieval.routing import best_lead, model_routes
from deepsift.store import Store
from deepsift.web import WEB, WEB_DESCRIPTION

EVAL = Path(__file__).parent.parent.parent / "shared" / "eval"
SOURCES = {
    **DEMO_DESCRIPTIONS,
    "wikipedia": "Wikipedia paragraphs: people, films, places, organisations and their history",
    WEB: WEB_DESCRIPTION,
}
SAMPLE_QUESTIONS = [
    "How much phosphorus does the lake sediment release in summer?",
    "Which monitoring stations measure water quality on Lake Veldmere?",
    "What did the buffer-strip trial find about runoff?",
    "What treatment process was Kestrel Works designed around?",
    "What did the board decide about the Kestrel Works budget in September 2021?",
    "Which contractor built Kestrel Works and for how much?",
    "What happened in incident IR-2024-031?",
    "What did the press release of October 2025 announce?",
    "What did the close-out review say about the cost overrun?",
    "Who leads the monitoring network's field team?",
]
MARGINS = (0.0, 0.05, 0.1, 0.15, 0.2)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--questions", type=int, default=30, help="from each public set")
    args = parser.parse_args()
    queries = list(SAMPLE_QUESTIONS)
    for path in ("2wikimultihopqa/dev_public_400.json", "musique/train_100.json"):
        queries += [q.question for q in load_dataset(EVAL / path)[: args.questions]]
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(data_dir=Path(tmp))
        deps = Deps(settings, Store(settings), get_embedder(settings), chat_model(settings))
        picks: list[list[str]] = []
        calls = 0
        for start in range(0, len(queries), 4):
            batch = queries[start : start + 4]
            picked, usage = model_routes(batch, SOURCES, deps)
            calls += usage.llm_calls
            picks += [picked.get(n, list(SOURCES)) for n in range(1, len(batch) + 1)]
        names = list(SOURCES)
        described = [f"{name}: {text}" for name, text in SOURCES.items()]
        similarity = similarities(deps.embedder, queries, described)
        deps.store.close()
    rows = []
    for margin in MARGINS:
        decided = agreed = 0
        for row, pick in zip(similarity, picks, strict=True):
            best, lead = best_lead(row)
            if lead >= margin:
                decided += 1
                agreed += names[best] in pick
        rows.append(
            {
                "margin": margin,
                "queries": len(queries),
                "decided_without_model": round(decided / len(queries), 2),
                "agrees_with_model": round(agreed / decided, 2) if decided else 0.0,
                "model_calls_for_all": calls,
            }
        )
    print_table(rows)
    print(f"saved {save('routing', rows)}")


if __name__ == "__main__":
    main()
