"""Rates at scale. `store`: chunks inserted per second and hybrid searches per second, into a
Milvus Lite file and into a Milvus server (`milvus-lite server` on a loopback port), at the
same N chunks. `ingest`: chunks per second of `deepsift ingest` in this process against
`--ray local` with 1 and 2 embedding actors, each a fresh process into a fresh data dir, and
whether each way stored exactly the chunks (ids, sources, texts) of the local ingest.

    python benchmarks/scale.py store --chunks 100000 [--corpus DIR] [--out FILE]
    python benchmarks/scale.py ingest [--files N] [--corpus DIR] [--out FILE]

Texts are the corpus's passages (the RFC folder by default), cut at 800 characters and reused
until N; vectors are random unit vectors of the embedder's size (384): embedding 100,000 chunks
takes hours on two cores and does not change what the store does with them. Run it alone on
the machine."""

import argparse
import json
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from deepsift.config import Settings
from deepsift.store import Store, StoredChunk

ROOT = Path(__file__).resolve().parent
DIM, BATCH, SEARCHES, K = 384, 256, 200, 10


class _Sized:
    name, dim = "random-384", DIM


def passages(corpus: Path, count: int) -> list[str]:
    texts = []
    for path in sorted(corpus.iterdir()):
        text = " ".join(path.read_text(errors="ignore").split())
        texts += [text[i : i + 800] for i in range(0, len(text), 800)]
    return [texts[n % len(texts)] for n in range(count)]


def chunks(texts: list[str]) -> list[StoredChunk]:
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(len(texts), DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return [
        StoredChunk(
            id=f"c{n}",
            text=text,
            vector=vectors[n].tolist(),
            source=f"/doc{n // 20}.md",
            title=f"doc {n // 20}",
            position=n % 20,
            doc_hash="h",
        )
        for n, text in enumerate(texts)
    ]


def measure(settings: Settings, rows: list[StoredChunk], clients: int) -> dict:
    store = Store(settings)
    name = "scale"
    if store.exists(name):
        store.drop(name)
    store.ensure(name, "scale benchmark", _Sized())
    started = time.perf_counter()
    for start in range(0, len(rows), BATCH):
        store.add_chunks(name, rows[start : start + BATCH])
    store.flush(name)
    inserted = time.perf_counter() - started
    words = [r.text.split() for r in random.Random(1).sample(rows, SEARCHES)]
    queries = [" ".join(w[3:9]) for w in words]
    vectors = [r.vector for r in random.Random(2).sample(rows, SEARCHES)]
    store.search(name, queries[0], vectors[0], K)  # loaded

    def one(n: int) -> float:
        begun = time.perf_counter()
        store.search(name, queries[n], vectors[n], K)
        return time.perf_counter() - begun

    started = time.perf_counter()
    single = [one(n) for n in range(SEARCHES)]
    sequential = time.perf_counter() - started
    started = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        list(pool.map(one, range(SEARCHES)))
    parallel = time.perf_counter() - started
    count = store.count(name)
    store.drop(name)
    store.close()
    return {
        "chunks": count,
        "insert_chunks_per_s": round(len(rows) / inserted, 1),
        "insert_s": round(inserted, 1),
        "search_per_s": round(SEARCHES / sequential, 1),
        "search_p50_ms": round(1000 * statistics.median(single), 1),
        f"search_per_s_{clients}_threads": round(SEARCHES / parallel, 1),
    }


def server(data: Path) -> tuple[subprocess.Popen, str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [str(Path(sys.executable).parent / "milvus-lite"), "server", "--data-dir", str(data)]
    process = subprocess.Popen(
        [*command, "--host", "127.0.0.1", "--port", str(port)], stdout=subprocess.DEVNULL
    )
    for _ in range(300):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return process, f"http://127.0.0.1:{port}"
        except OSError:
            time.sleep(0.2)
    process.kill()
    raise SystemExit("milvus-lite server did not start")


def ingest_rates(corpus: Path, files: int) -> dict:
    """Each way of ingesting the corpus's first `files` files: wall seconds, chunks, chunks/s."""
    rates = {}
    ways = {"local": [], "ray_1_worker": ["--ray", "local", "--ray-workers", "1"]}
    ways["ray_2_workers"] = ["--ray", "local", "--ray-workers", "2"]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "docs"
        folder.mkdir()
        for path in sorted(corpus.iterdir())[:files]:
            (folder / path.name).write_bytes(path.read_bytes())
        for way, flags in ways.items():
            data = Path(tmp) / way
            command = [sys.executable, "-m", "deepsift", "ingest", str(folder), "--collection"]
            started = time.perf_counter()
            done = subprocess.run(
                [*command, "docs", *flags],
                env={"PATH": "/usr/bin:/bin", "HOME": tmp, "DEEPSIFT_DATA_DIR": str(data)},
                capture_output=True,
                text=True,
                check=True,
            )
            seconds = time.perf_counter() - started
            row = [line for line in done.stderr.splitlines() if line.startswith("│")][-1]
            chunks = int(row.strip("│").split("│")[5])
            rates[way] = {
                "files": files,
                "chunks": chunks,
                "wall_s": round(seconds, 1),
                "chunks_per_s": round(chunks / seconds, 2),
            }
            rates[way]["same_as_local"] = stored(data) == stored(Path(tmp) / "local")
            print(way, rates[way], flush=True)
    return rates


def stored(data: Path) -> dict[str, tuple[str, str]]:
    """Every chunk an ingest stored: id -> (source, text)."""
    with Store(Settings(data_dir=data)) as store:
        rows = store._rows("docs", 'id != ""', ["id", "source", "text"])
        return {row["id"]: (row["source"], row["text"]) for row in rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=["store", "ingest"])
    parser.add_argument(
        "--files", type=int, default=0, help="ingest: the corpus's first N (0: all)"
    )
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--clients", type=int, default=4, help="threads searching at once")
    parser.add_argument(
        "--corpus", type=Path, default=ROOT.parent.parent / "shared/eval/rust-rfcs/corpus"
    )
    parser.add_argument("--out", type=Path, help="default: results/scale_<what>.json")
    args = parser.parse_args()
    out = args.out or ROOT / "results" / f"scale_{args.what}.json"
    if args.what == "ingest":
        files = args.files or len(list(args.corpus.iterdir()))
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(ingest_rates(args.corpus, files), indent=2) + "\n")
        return
    rows = chunks(passages(args.corpus, args.chunks))
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        results["lite_file"] = measure(Settings(data_dir=Path(tmp) / "lite"), rows, args.clients)
        process, uri = server(Path(tmp) / "server")
        try:
            results["server"] = measure(Settings(milvus_uri=uri), rows, args.clients)
        finally:
            process.terminate()
            process.wait(60)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
