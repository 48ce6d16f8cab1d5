"""Ablation of the first round's retrieval techniques, from a `deepsift eval retrieval` run.

A first round's ranking is deterministic given its sub-queries, so each on/off combination of
the question's own search, the decomposed sub-queries and the LLM-free hop is recomputed here
exactly, from the sub-queries the run recorded, on the same corpus, with no model call. LLM
calls, tokens and seconds per question come from the run for the variants that decompose;
the others make no LLM call and their seconds are measured here.

    python benchmarks/ablation.py --dataset FILE --results OUT/results.jsonl [--data-dir DIR]

Prints a table, writes ablation.json and ablation.png (recall@5 against LLM calls per question)
beside the results it replays, so that runs on different sets do not overwrite each other.
"""

import argparse
import json
import time
from pathlib import Path
from statistics import mean

from _common import print_table, save

from deepsift.config import Settings
from deepsift.deps import Deps
from deepsift.eval.datasets import dataset_hash, load_dataset
from deepsift.eval.metrics import all_found, recall_at_k
from deepsift.eval.runner import RANKING_DEPTH, corpus_collection
from deepsift.graph.ranking import SUB_QUERY_WEIGHT, merge_chunks, ranked, result_list
from deepsift.llm.models import get_embedder
from deepsift.nodes.hop import hop
from deepsift.records import Chunk
from deepsift.store import Store

VARIANTS = {  # name: (the question's own search, sub-queries, hops, rerank by similarity)
    "one search (naive)": (True, False, 0, False),
    "sub-queries only": (False, True, 0, False),
    "question + sub-queries": (True, True, 0, False),
    "question + hop (no LLM)": (True, False, 1, False),
    "question + 2 hops (no LLM)": (True, False, 2, False),
    "question + hop + similarity (no LLM)": (True, False, 1, True),
    "question + sub-queries + hop": (True, True, 1, False),
}


def first_round(question: str, queries: list[str], use: tuple, ctx, weight: float) -> list:
    store, embedder, name, settings = ctx
    with_question, with_subs, hops, rerank = use

    def search(query: str, k: int, of_question: bool = False, w: float = 1.0) -> dict:
        hits = store.search(name, query, embedder.embed_queries([query])[0], k)
        return result_list(hits, of_question, w)

    chunks: dict[str, Chunk] = {}
    if with_question:
        chunks = merge_chunks(chunks, search(question, settings.question_depth, of_question=True))
    for query in queries if with_subs else []:
        chunks = merge_chunks(chunks, search(query, settings.top_k, w=weight))
    state = {
        "question": question,
        "chunks": chunks,
        "sub_queries": queries if with_subs else [],
        "sources_to_search": [name],
        "hopped": [],
    }
    deps = Deps(settings, store, embedder, None)
    for _ in range(hops):  # the graph's own hop node, its state updates applied by hand
        update = hop(state, deps)
        state["chunks"] = merge_chunks(state["chunks"], update.get("chunks"))
        state["hopped"] += update.get("hopped", [])
    order = ranked(state)
    if rerank:
        order = by_similarity(question, order, embedder)
    return [c.title for c in order][:RANKING_DEPTH]


def by_similarity(question: str, order: list[Chunk], embedder, depth: int = 20) -> list[Chunk]:
    """The top `depth` fused again with their cosine similarity to the question (RRF)."""
    head, tail = order[:depth], order[depth:]
    vectors = embedder.embed_queries([question]) + embedder.embed([c.text for c in head])
    similarity = [sum(a * b for a, b in zip(vectors[0], v, strict=True)) for v in vectors[1:]]
    by_cosine = sorted(range(len(head)), key=lambda i: -similarity[i])
    score = {i: 1 / (60 + r) for r, i in enumerate(range(len(head)), 1)}
    for r, i in enumerate(by_cosine, 1):
        score[i] += 1 / (60 + r)
    keep = head[:2]  # the question's lead stays
    rest = sorted((i for i in range(2, len(head))), key=lambda i: -score[i])
    return keep + [head[i] for i in rest] + tail


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dataset", type=Path, required=True)
    parser.add_argument("--results", type=Path, required=True)
    parser.add_argument("--data-dir", type=Path, default=Path(".deepsift"))
    parser.add_argument(
        "--weights",
        default=f"0,0.25,{SUB_QUERY_WEIGHT},1",
        help="sub-query list weights to compare in the full first round",
    )
    args = parser.parse_args()
    settings = Settings(data_dir=args.data_dir)
    store, embedder = Store(settings), get_embedder(settings)
    questions = {q.id: q for q in load_dataset(args.dataset)}
    deps = Deps(settings, store, embedder, None)
    name = corpus_collection(
        list(questions.values()), dataset_hash(args.dataset), args.dataset.name, deps
    )
    lines = [json.loads(line) for line in args.results.read_text().splitlines()]
    runs = [r for r in lines if r["agent"] == "deepsift" and r["max_iterations"] == 1]
    runs = [r for r in runs if not r.get("error") and "queries" in r]
    variants = [(name, use, SUB_QUERY_WEIGHT) for name, use in VARIANTS.items()]
    variants += [
        (f"question + sub-queries x {w:g} + hop", (True, True, 1, False), w)
        for w in map(float, args.weights.split(","))
    ]
    rows = []
    for variant, use, weight in variants:
        scores: dict[str, list[float]] = {k: [] for k in ("recall@2", "recall@5", "recall@10")}
        found_all, started = [], time.monotonic()
        for run in runs:
            question = questions[run["id"]]
            context = (store, embedder, name, settings)
            titles = first_round(question.question, run["queries"], use, context, weight)
            for k in (2, 5, 10):
                scores[f"recall@{k}"].append(recall_at_k(titles, question.gold_titles, k))
            found_all.append(all_found(titles, question.gold_titles, 10))
        decomposes = use[1]  # only the variants with sub-queries make an LLM call
        rows.append(
            {
                "variant": variant,
                "questions": len(runs),
                **{k: round(mean(v), 3) for k, v in scores.items()},
                "all@10": round(mean(found_all), 3),
                "llm_calls": round(mean(r["llm_calls"] for r in runs), 2) if decomposes else 0.0,
                "tokens": round(mean(r["prompt_tokens"] + r["completion_tokens"] for r in runs))
                if decomposes
                else 0,
                "seconds": round(mean(r["seconds"] for r in runs), 2)
                if decomposes
                else round((time.monotonic() - started) / len(runs), 2),
            }
        )
    store.close()
    print_table(rows)
    out = args.results.parent
    print(f"saved {save('ablation', rows, out)}")
    plot(rows, out / "ablation.png")


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(6, 4))
    for n, row in enumerate(rows):
        axes.scatter(row["llm_calls"], row["recall@5"], color=f"C{n}", label=row["variant"])
    axes.set_xlabel("LLM calls per question")
    axes.set_ylabel("recall@5")
    axes.set_ylim(0, 1)
    axes.grid(alpha=0.3)
    axes.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=120)


if __name__ == "__main__":
    main()
