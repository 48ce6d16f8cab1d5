"""The embedded embedders compared on the public eval sets, with no LLM call.

For each set and embedder: the set's corpus is embedded (passages/s), then every question is
answered by the two LLM-free rankings the research graph starts from: one hybrid search with the
question, and that search plus the LLM-free hop (ablation.first_round). Recall is what the
embedder changes; seconds are measured here, so run it alone for fair speeds.

    python benchmarks/embedders.py [--data-dir DIR] [--embedders minilm,e5-small] [SET.json ...]

Prints a table and writes benchmarks/results/embedders.json.
"""

import argparse
import time
from pathlib import Path
from statistics import mean

from _common import print_table, save
from ablation import VARIANTS, first_round

from deepsift.config import Settings
from deepsift.deps import Deps
from deepsift.eval.datasets import dataset_hash, load_dataset
from deepsift.eval.metrics import all_found, recall_at_k
from deepsift.eval.runner import corpus_collection
from deepsift.llm.embedders import get_embedder
from deepsift.store import Store

EVAL = Path(__file__).parent.parent.parent / "shared" / "eval"
SETS = [
    EVAL / "2wikimultihopqa" / "dev_public_400.json",
    EVAL / "hotpotqa" / "dev_public_400.json",
    EVAL / "musique" / "train_100.json",
]
COMPARED = ("one search (naive)", "question + hop (no LLM)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("sets", nargs="*", type=Path, default=SETS)
    parser.add_argument("--data-dir", type=Path, default=Path(".deepsift-bench"))
    parser.add_argument("--embedders", default="minilm,e5-small")
    args = parser.parse_args()
    rows = []
    for dataset in args.sets:
        questions = load_dataset(dataset)
        for choice in args.embedders.split(","):
            settings = Settings(data_dir=args.data_dir, embedder=choice)
            store, embedder = Store(settings), get_embedder(settings)
            paragraphs = len({p for q in questions for p in q.paragraphs})
            started = time.monotonic()
            name = corpus_collection(
                questions,
                dataset_hash(dataset),
                dataset.name,
                Deps(settings, store, embedder, None),
            )
            built = time.monotonic() - started
            for variant in COMPARED:
                rows.append(_scores(dataset, questions, variant, (store, embedder, name, settings)))
                rows[-1].update(embedder=choice, passages_per_s=round(paragraphs / built, 1))
            store.close()
            print_table(rows)
    print(f"saved {save('embedders', rows)}")


def _scores(dataset: Path, questions: list, variant: str, context: tuple) -> dict:
    scores: dict[str, list[float]] = {f"recall@{k}": [] for k in (2, 5, 10)}
    found_all, started = [], time.monotonic()
    for question in questions:
        titles = first_round(question.question, [], VARIANTS[variant], context, 1.0)
        for k in (2, 5, 10):
            scores[f"recall@{k}"].append(recall_at_k(titles, question.gold_titles, k))
        found_all.append(all_found(titles, question.gold_titles, 10))
    return {
        "set": f"{dataset.parent.name} ({len(questions)})",
        "variant": variant,
        **{k: round(mean(v), 3) for k, v in scores.items()},
        "all@10": round(mean(found_all), 3),
        "ms_per_question": round(1000 * (time.monotonic() - started) / len(questions)),
    }


if __name__ == "__main__":
    main()
