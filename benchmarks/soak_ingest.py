"""Soak: kill `deepsift ingest --prune` at random moments, many times, while its notes change
(edited longer or shorter, deleted, added); then let it finish. The collection must hold exactly
what a clean ingest of the final notes gives: no chunk missing, none stale.

    python benchmarks/soak_ingest.py [--kills 50] [--notes 300] [--seed 1]
"""

import argparse
import hashlib
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import print_table

from deepsift.config import Settings
from deepsift.ingest.chunking import chunk_document
from deepsift.ingest.loaders import load
from deepsift.ingest.pipeline import chunk_id
from deepsift.store import Store

CHUNKING = {"chunk_chars": 200, "chunk_overlap": 0}  # a paragraph of a note is one chunk


def write_note(path: Path, rng: random.Random) -> None:
    parts = [
        f"{path.stem}, part {n}: the Orrin gauge read {rng.randint(0, 999)} on day {n}. " * 3
        for n in range(rng.randint(1, 4))
    ]
    path.write_text("\n\n".join(parts))


def change_notes(folder: Path, rng: random.Random, notes: int) -> None:
    """Edit a quarter of the notes (their chunk count changes too), delete a few, add a few."""
    existing = sorted(folder.iterdir())
    for path in rng.sample(existing, len(existing) // 4):
        write_note(path, rng)
    for path in rng.sample(existing, 3):
        path.unlink()
    for _ in range(3):
        write_note(folder / f"note_{rng.randrange(notes * 10):05d}.txt", rng)


def expected_rows(folder: Path, settings: Settings) -> set[tuple[str, str, int, str]]:
    rows = set()
    for path in sorted(folder.iterdir()):
        source, doc_hash = str(path.resolve()), hashlib.sha256(path.read_bytes()).hexdigest()
        for c in chunk_document(load(path), settings.chunk_chars, settings.chunk_overlap):
            rows.add((source, chunk_id(source, c.position, c.text), c.position, doc_hash))
    return rows


def stored_rows(settings: Settings) -> set[tuple[str, str, int, str]]:
    fields = ["source", "id", "position", "doc_hash"]
    with Store(settings) as store:
        store.count("notes")  # loads the collection
        rows = store._client.query("notes", filter="", output_fields=fields, limit=16_384)
    return {tuple(row[f] for f in fields) for row in rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=50)
    parser.add_argument("--notes", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        folder, data = Path(tmp, "notes"), Path(tmp, "data")
        folder.mkdir()
        for n in range(args.notes):
            write_note(folder / f"note_{n:05d}.txt", rng)
        env = {
            "PATH": "/usr/bin:/bin",
            "HOME": tmp,
            "DEEPSIFT_DATA_DIR": str(data),
            **{f"DEEPSIFT_{k.upper()}": str(v) for k, v in CHUNKING.items()},
        }
        command = [sys.executable, "-m", "deepsift", "ingest", str(folder), "--prune"]
        command += ["--collection", "notes"]
        mid_run = 0
        for kill in range(args.kills):
            if kill:
                change_notes(folder, rng, args.notes)
            child = subprocess.Popen(
                command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )
            time.sleep(rng.uniform(2.5, 8))  # it starts writing after about 4 s
            running = child.poll() is None
            child.send_signal(signal.SIGKILL)
            child.wait()
            mid_run += running
            print(f"kill {kill + 1}/{args.kills}: {'mid-run' if running else 'after it ended'}")
        change_notes(folder, rng, args.notes)
        final = subprocess.run(command, env=env, capture_output=True, text=True)
        settings = Settings(data_dir=data, **CHUNKING)
        expected, stored = expected_rows(folder, settings), stored_rows(settings)
    print_table(
        [
            {
                "kills": args.kills,
                "mid-run": mid_run,
                "notes": len({row[0] for row in expected}),
                "chunks expected": len(expected),
                "chunks stored": len(stored),
                "missing": len(expected - stored),
                "stale": len(stored - expected),
                "final exit": final.returncode,
                "seconds": round(time.monotonic() - started),
            }
        ]
    )
    sys.exit(0 if expected == stored and final.returncode == 0 else 1)


if __name__ == "__main__":
    main()
