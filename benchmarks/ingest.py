"""Ingest throughput: `deepsift ingest` (load, chunk, embed, write to Milvus Lite, flush) against
the raw embedder alone on the same chunk texts, on a generated corpus of >= 2,000 chunks.

    python benchmarks/ingest.py [--files 220]
"""

import argparse
import random
import tempfile
import time
from pathlib import Path

from _common import peak_rss_mib, print_table, save

from deepsift.config import Settings
from deepsift.ingest.chunking import chunk_document
from deepsift.ingest.loaders import load
from deepsift.ingest.pipeline import ingest
from deepsift.llm.embedders import get_embedder
from deepsift.store import Store

WORDS = (
    "lake basin phosphorus algae bloom river inflow sediment plant treatment budget contract "
    "board monitoring station buoy sample toxin closure farm strip runoff nutrient load summer "
    "report survey design capacity flow weir pump dosing sludge cost overrun delay review"
).split()


def write_corpus(folder: Path, files: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    for n in range(files):
        sections = []
        for s in range(10):
            paragraphs = [
                " ".join(rng.choice(WORDS) for _ in range(rng.randint(60, 90))).capitalize() + "."
                for _ in range(2)
            ]
            sections.append(f"## Section {s}\n\n" + "\n\n".join(paragraphs))
        (folder / f"doc_{n:04d}.md").write_text(f"# Document {n}\n\n" + "\n\n".join(sections))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=220)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "corpus"
        corpus.mkdir()
        write_corpus(corpus, args.files)
        settings = Settings(data_dir=Path(tmp) / "data")
        embedder = get_embedder(settings)  # loaded before timing: both sides need it
        store = Store(settings)

        started = time.perf_counter()
        report = ingest([corpus], "bench", store, embedder, settings)
        ingest_seconds = time.perf_counter() - started
        rss_after_ingest = peak_rss_mib()
        chunks = report.new_chunks
        store.close()

        texts = [
            chunk.text
            for path in sorted(corpus.glob("*.md"))
            for chunk in chunk_document(load(path), settings.chunk_chars, settings.chunk_overlap)
        ]
        assert len(texts) == chunks, (len(texts), chunks)
        started = time.perf_counter()
        embedder.embed(texts)
        embed_seconds = time.perf_counter() - started

    rows = [
        {
            "step": "deepsift ingest",
            "chunks": chunks,
            "seconds": ingest_seconds,
            "chunks_per_s": chunks / ingest_seconds,
            "peak_rss_mib": rss_after_ingest,
        },
        {
            "step": "raw embedder",
            "chunks": chunks,
            "seconds": embed_seconds,
            "chunks_per_s": chunks / embed_seconds,
            "peak_rss_mib": peak_rss_mib(),
        },
    ]
    print_table(rows)
    ratio = rows[0]["chunks_per_s"] / rows[1]["chunks_per_s"]
    print(f"ingest / raw embedding throughput: {ratio:.2f}")
    path = save("ingest", rows + [{"step": "ratio", "ingest_over_raw": ratio}])
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
