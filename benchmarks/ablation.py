"""Ablation of the first round's retrieval techniques, from a `deepsift eval retrieval` run.

A first round's ranking is deterministic given its sub-queries, so each variant is recomputed
here exactly, with the graph's own search, hop and ranking, from the sub-queries the run
recorded, on the same corpus, with no model call. Each technique is turned off alone against
everything on; "as before folders" turns off all that came with benchmarks/folders.md. LLM
calls, tokens and seconds per question come from the run for the variants that decompose.

    python benchmarks/ablation.py --dataset FILE --results OUT/results.jsonl [--corpus DIR]
        [--data-dir DIR]

With --corpus, the folder's collection (as `deepsift eval --corpus` built it) is searched and
rankings are scored by documents. Prints a table, writes ablation.json beside the results.
"""

import argparse
import json
import re
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from statistics import mean

from _common import print_table, save

import deepsift.retrieval.bridge as bridge
import deepsift.retrieval.hop as hop
import deepsift.retrieval.search
from deepsift.config import Settings
from deepsift.deps import Deps
from deepsift.eval.datasets import dataset_hash, load_dataset
from deepsift.eval.folders import NAIVE_CHUNKS, folder_collection, ranked_documents
from deepsift.eval.metrics import all_found, recall_at_k
from deepsift.eval.runner import RANKING_DEPTH, corpus_collection, corpus_store
from deepsift.llm.embedders import get_embedder
from deepsift.retrieval.hop import next_hop
from deepsift.retrieval.ranking import DOCUMENT_SPREAD, SUB_QUERY_WEIGHT, merge_chunks, ranked
from deepsift.retrieval.search import search_source
from deepsift.text.queries import clean_queries, without_invented_numbers


@dataclass(frozen=True)
class Variant:
    question: bool = True  # the question's own search
    sub_queries: bool = True
    hops: int = 1
    weight: float = SUB_QUERY_WEIGHT  # of a sub-query's list
    spread: int = DOCUMENT_SPREAD  # the question's search: k documents, this many k chunks deep
    strike_numbers: bool = True  # numbers the question lacks struck from the sub-queries
    question_once: bool = True  # a sub-query that is the question is not searched again
    slug_titles: bool = True  # a file name is a name written as a slug
    reference_support: bool = True  # a reference followed only where the question finds it too
    rare_names: bool = True  # a name without a page followed where few documents mention it
    unpaged_weight: float = 0.5  # of their hits in the fusion
    settings: dict = field(default_factory=dict)


NOW = Variant()
BEFORE_FOLDERS = Variant(
    spread=1,
    strike_numbers=False,
    question_once=False,
    slug_titles=False,
    settings={"hop_references": 0, "hop_unpaged_names": True},
)
VARIANTS = {
    "question only": Variant(sub_queries=False, hops=0),
    "as before folders": BEFORE_FOLDERS,
    "now: all on": NOW,
    "now, question 1x deep": replace(NOW, spread=1),
    "now, numbers not struck": replace(NOW, strike_numbers=False),
    "now, the question searched again": replace(NOW, question_once=False),
    "now, file names not read as names": replace(NOW, slug_titles=False),
    "now, no references": replace(NOW, settings={"hop_references": 0}),
    "now, no hop": replace(NOW, hops=0),
    "now, references not held to the question": replace(NOW, reference_support=False),
    "now, no rare names": replace(NOW, rare_names=False),
    "now, rare names at .25": replace(NOW, unpaged_weight=0.25),
    "now, rare names at 1": replace(NOW, unpaged_weight=1.0),
    "now, every unpaged name": replace(NOW, settings={"hop_unpaged_names": True}),
    "now, no sub-queries": replace(NOW, sub_queries=False),
}

hop_support, hop_rare = hop.SUPPORT_CHUNKS, hop.RARE_NAME_DOCUMENTS
ON = {name: getattr(bridge, name) for name in ("_FILING", "_CAMEL", "_PUNCTUATION")}
# Before: no filing number set aside, and only white space split words.
NEVER = re.compile(r"(?!)")
OFF = {"_FILING": NEVER, "_CAMEL": NEVER, "_PUNCTUATION": re.compile(r"\s+")}


def first_round(question: str, queries: list[str], variant: Variant, context: tuple) -> list:
    store, embedder, name, settings = context
    deps = Deps(settings.model_copy(update=variant.settings), store, embedder, None)
    deepsift.retrieval.search.DOCUMENT_SPREAD = variant.spread
    hop.SUPPORT_CHUNKS = hop_support if variant.reference_support else 0
    hop.RARE_NAME_DOCUMENTS = hop_rare if variant.rare_names else 0
    hop.UNPAGED_WEIGHT = variant.unpaged_weight
    for attribute in ON:
        setattr(bridge, attribute, (ON if variant.slug_titles else OFF)[attribute])
    chunks = {}
    if variant.question:
        found = search_source(question, name, deps, settings.question_depth, of_question=True)
        chunks = found["chunks"]
    if variant.strike_numbers:  # as decompose does
        queries = clean_queries(without_invented_numbers(queries, question), len(queries))
        queries = queries or [question]
    searched = clean_queries(queries, len(queries), [question]) if variant.question else queries
    for query in (searched if variant.question_once else queries) if variant.sub_queries else []:
        found = search_source(query, name, deps, settings.top_k, weight=variant.weight)
        chunks = merge_chunks(chunks, found["chunks"])
    state = {
        "question": question,
        "chunks": chunks,
        "sub_queries": queries if variant.sub_queries else [],
        "sources_to_search": [name],
        "hopped": [],
    }
    for _ in range(variant.hops):  # the graph's own hop node, its state updates applied by hand
        update = next_hop(state, deps)
        state["chunks"] = merge_chunks(state["chunks"], update.get("chunks"))
        state["hopped"] += update.get("hopped", [])
    return ranked(state)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dataset", type=Path, required=True)
    parser.add_argument("--results", type=Path, required=True)
    parser.add_argument("--corpus", type=Path, help="the folder a --corpus eval searched")
    parser.add_argument("--data-dir", type=Path, default=Path(".deepsift"))
    parser.add_argument("--variants", help="variant names separated by ; (default: all)")
    args = parser.parse_args()
    settings = Settings(data_dir=args.data_dir)
    embedder = get_embedder(settings)
    questions = {q.id: q for q in load_dataset(args.dataset)}
    store = corpus_store(settings)
    deps = Deps(settings, store, embedder, None)
    if args.corpus:
        name, _ = folder_collection(args.corpus, deps)

        def names(chunks: list) -> list[str]:
            return ranked_documents(chunks, args.corpus)

        def naive(question: str) -> list:
            vector = embedder.embed_queries([question])[0]
            return store.search(name, question, vector, NAIVE_CHUNKS)
    else:
        listed = list(questions.values())
        name = corpus_collection(listed, dataset_hash(args.dataset), args.dataset.name, deps)

        def names(chunks: list) -> list[str]:
            return [chunk.title for chunk in chunks][:RANKING_DEPTH]

        def naive(question: str) -> list:
            vector = embedder.embed_queries([question])[0]
            return store.search(name, question, vector, RANKING_DEPTH)

    lines = [json.loads(line) for line in args.results.read_text().splitlines()]
    runs = [r for r in lines if r["agent"] == "deepsift" and r["max_iterations"] == 1]
    runs = [r for r in runs if not r.get("error") and "queries" in r]
    context = (store, embedder, name, settings)
    variants = {"one search (naive)": None, **VARIANTS}
    if args.variants:
        chosen = args.variants.split(";")
        variants = {k: v for k, v in variants.items() if k in chosen}
    rows = []
    for variant_name, variant in variants.items():
        scores: dict[str, list[float]] = {k: [] for k in ("recall@2", "recall@5", "recall@10")}
        found_all, by_kind, all_by_kind, started = [], {}, {}, time.monotonic()
        for run in runs:
            question = questions[run["id"]]
            if variant is None:
                order = naive(question.question)
            else:
                order = first_round(question.question, run["queries"], variant, context)
            ranking = names(order)
            gold = question.gold_sources or question.gold_titles
            for k in (2, 5, 10):
                scores[f"recall@{k}"].append(recall_at_k(ranking, gold, k))
            found_all.append(all_found(ranking, gold, 10))
            by_kind.setdefault(question.kind, []).append(scores["recall@5"][-1])
            all_by_kind.setdefault(question.kind, []).append(found_all[-1])
        decomposes = variant is not None and variant.sub_queries
        rows.append(
            {
                "variant": variant_name,
                "questions": len(runs),
                **{k: round(mean(v), 3) for k, v in scores.items()},
                "all@10": round(mean(found_all), 3),
                "recall@5 by kind": " ".join(
                    f"{kind or '-'} {mean(v):.2f}" for kind, v in sorted(by_kind.items())
                ),
                "all@10 by kind": " ".join(
                    f"{kind or '-'} {mean(v):.2f}" for kind, v in sorted(all_by_kind.items())
                ),
                "llm_calls": round(mean(r["llm_calls"] for r in runs), 2) if decomposes else 0.0,
                "seconds": round(mean(r["seconds"] for r in runs), 2)
                if decomposes
                else round((time.monotonic() - started) / len(runs), 2),
            }
        )
    store.close()
    print_table(rows)
    print(f"saved {save('ablation', rows, args.results.parent)}")


if __name__ == "__main__":
    main()
