"""Soak: kill `deepsift batch` (SIGKILL) at many random points, then let it finish; every
question must be answered exactly once, without an error.

Each run is a fresh `python -m deepsift batch` process against a scripted loopback endpoint
(which serves the embeddings too, so no embedding model loads); it is killed once the answers
file has grown by a random number of lines, or at a random moment while it starts.

    python benchmarks/soak_batch.py [--kills 50] [--questions 200] [--seed N]
"""

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from _common import save

from fake_openai import FakeOpenAI
from scripted import ScriptedResearcher

CORPUS = Path(__file__).parent.parent / "examples" / "corpus"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kills", type=int, default=50)
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--seed", type=int, default=random.randrange(10**6))
    args = parser.parse_args()
    rng = random.Random(args.seed)
    ids = [f"q{n}" for n in range(args.questions)]
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAI(ScriptedResearcher()) as llm:
        env = {
            "PATH": os.environ["PATH"],
            "HOME": tmp,
            "DEEPSIFT_DATA_DIR": f"{tmp}/data",
            "DEEPSIFT_LLM_BASE_URL": llm.url,
            "DEEPSIFT_LLM_API_KEY": "k",
            "DEEPSIFT_EMBEDDING_BASE_URL": llm.url,
            "DEEPSIFT_EMBEDDING_MODEL": "fake-embed",
            "DEEPSIFT_MAX_ITERATIONS": "1",
            "DEEPSIFT_REPORT_LENGTH": "brief",
        }
        deepsift = [sys.executable, "-m", "deepsift"]
        corpus = Path(tmp) / "corpus"  # the sample's text files, as plain text
        corpus.mkdir()
        for path in (CORPUS / "science").glob("*.md"):
            (corpus / f"{path.stem}.txt").write_text(path.read_text())
        ingest = [*deepsift, "ingest", str(corpus), "--collection", "science"]
        subprocess.run(ingest, env=env, check=True, capture_output=True)
        questions, answers = Path(tmp) / "q.jsonl", Path(tmp) / "a.jsonl"
        questions.write_text(
            "".join(
                json.dumps({"id": i, "question": f"{i}: what did Kestrel cost?"}) + "\n"
                for i in ids
            )
        )
        batch = [*deepsift, "batch", str(questions), "-o", str(answers), "--concurrency", "4"]
        started = time.monotonic()
        finished_early = 0
        for kill in range(1, args.kills + 1):
            grow = rng.choice([0, 1, 2, 3, 5, 8])  # 0: killed while it starts
            target = _lines(answers) + grow
            process = subprocess.Popen(batch, env=env, stderr=subprocess.DEVNULL)
            while process.poll() is None and _lines(answers) < target:
                time.sleep(0.01)
            time.sleep(rng.uniform(0, 0.5))
            if process.poll() is None:
                os.kill(process.pid, signal.SIGKILL)
            else:
                finished_early += 1
            process.wait()
            print(f"kill {kill:3}: {_lines(answers):4} lines", flush=True)
        final = subprocess.run(batch, env=env, capture_output=True, text=True)
        rows = [json.loads(line) for line in answers.read_text().splitlines()]
    counts = Counter(row["id"] for row in rows)
    duplicated = sorted(i for i, n in counts.items() if n > 1)
    missing = sorted(set(ids) - set(counts))
    errors = sorted(row["id"] for row in rows if row["error"] is not None)
    print(
        f"seed {args.seed}: {args.kills} kills ({finished_early} found the batch finished), "
        f"then a final run (exit {final.returncode}) in {time.monotonic() - started:.0f} s"
    )
    print(
        f"{len(ids)} questions: {len(counts)} answered, {len(duplicated)} duplicated, "
        f"{len(missing)} missing, {len(errors)} with an error"
    )
    ok = final.returncode == 0 and not duplicated and not missing and not errors
    summary = {"seed": args.seed, "kills": args.kills, "questions": len(ids), "ok": ok}
    summary |= {"duplicated": len(duplicated), "missing": len(missing), "errors": len(errors)}
    print(f"wrote {save('soak-batch', [summary])}")
    print("PASS: every question answered exactly once" if ok else f"FAIL {final.stderr[-2000:]}")
    sys.exit(0 if ok else 1)


def _lines(path: Path) -> int:
    return path.read_text().count("\n") if path.exists() else 0


if __name__ == "__main__":
    main()
