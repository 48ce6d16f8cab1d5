"""A Wikipedia-shaped benchmark file whose passages are titled by an opaque id instead of their
subject, as files named by number or hash are in real folders.

Each title becomes `doc-` and the first 10 hex digits of its SHA-256, in the context and in the
supporting facts alike; the passages' text and the questions are unchanged. A title is what the
LLM-free hop matches names against, so this variant measures what the run gains without it.

    python benchmarks/opaque_titles.py ../shared/eval/2wikimultihopqa/dev_public_400.json \
        benchmarks/results/2wiki-opaque.json [--limit 150]
    deepsift eval retrieval --dataset benchmarks/results/2wiki-opaque.json \
        --format 2wiki --agents naive,deepsift --max-iterations 1
"""

import argparse
import hashlib
import json
from pathlib import Path


def opaque(title: str) -> str:
    return "doc-" + hashlib.sha256(title.encode()).hexdigest()[:10]


def with_opaque_titles(record: dict) -> dict:
    """A 2WikiMultiHopQA or HotpotQA record with every title replaced by its opaque id."""
    return {
        **record,
        "context": [[opaque(title), sentences] for title, sentences in record["context"]],
        "supporting_facts": [[opaque(title), n] for title, n in record["supporting_facts"]],
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("source", type=Path, help="a 2WikiMultiHopQA or HotpotQA json file")
    parser.add_argument("out", type=Path)
    parser.add_argument("--limit", type=int, help="the first N questions")
    args = parser.parse_args()
    records = json.loads(args.source.read_text())[: args.limit]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps([with_opaque_titles(r) for r in records]))
    print(f"{len(records)} questions -> {args.out}")


if __name__ == "__main__":
    main()
