"""Hybrid search latency (dense + BM25, RRF) at 10k and 100k chunks in Milvus Lite.

Vectors are random unit vectors and texts random word sequences: search cost depends on the
number and size of rows, not on their meaning, and embedding 100k real chunks would take most of
an hour on two cores.

    python benchmarks/search.py [--sizes 10000,100000] [--queries 200]
"""

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
from _common import peak_rss_mib, print_table, save

from deepsift.config import Settings
from deepsift.store import Store, StoredChunk

VOCABULARY = [f"w{n}" for n in range(20_000)]
DIM = 384


class RandomEmbedder:
    name, dim = "random-unit-vectors", DIM


def fill(
    store: Store, name: str, size: int, rng: random.Random, vectors: np.random.Generator
) -> float:
    started = time.perf_counter()
    store.ensure(name, "benchmark", RandomEmbedder())
    for start in range(0, size, 5000):
        count = min(5000, size - start)
        dense = vectors.standard_normal((count, DIM)).astype(np.float32)
        dense /= np.linalg.norm(dense, axis=1, keepdims=True)
        chunks = [
            StoredChunk(
                id=f"c{start + n}",
                text=" ".join(rng.choices(VOCABULARY, k=120)),
                vector=dense[n].tolist(),
                source=f"doc{(start + n) // 10}",
                title=f"doc {(start + n) // 10}",
                position=(start + n) % 10,
                doc_hash="0",
            )
            for n in range(count)
        ]
        store.add_chunks(name, chunks)
    store.flush(name)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    rng, vectors = random.Random(3), np.random.default_rng(3)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Settings(data_dir=Path(tmp)))
        for size in (int(s) for s in args.sizes.split(",")):
            name = f"bench_{size}"
            load_seconds = fill(store, name, size, rng, vectors)
            latencies = []
            for _ in range(args.queries):
                query = " ".join(rng.choices(VOCABULARY, k=6))
                vector = vectors.standard_normal(DIM)
                vector /= np.linalg.norm(vector)
                started = time.perf_counter()
                store.search(name, query, vector.tolist(), 10)
                latencies.append((time.perf_counter() - started) * 1000)
            quantiles = statistics.quantiles(latencies, n=100)
            rows.append(
                {
                    "chunks": size,
                    "insert_s": load_seconds,
                    "queries": args.queries,
                    "p50_ms": quantiles[49],
                    "p95_ms": quantiles[94],
                    "peak_rss_mib": peak_rss_mib(),
                }
            )
            store.drop(name)
        store.close()
    print_table(rows)
    print(f"wrote {save('search', rows)}")


if __name__ == "__main__":
    main()
