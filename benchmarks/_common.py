"""Shared by the benchmarks: result files and a plain table printer."""

import json
import platform
import resource
import sys
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).parent / "results"
sys.path.insert(0, str(Path(__file__).parent.parent / "tests"))  # the loopback fake servers

DEMO_QUESTION = (
    "Why was the Kestrel Works treatment plant built, how much did it cost in the end compared "
    "with its approved budget, and did it reduce phosphorus levels in Lake Veldmere?"
)
DEMO_DESCRIPTIONS = {  # as `make demo` ingests them
    "science": "Science and monitoring of Lake Veldmere: water-quality data, the Kestrel Works "
    "plant design, buffer-strip trials, sediment studies, the monitoring network and its staff",
    "operations": "Operations of the Lake Veldmere Water Authority: board minutes and budgets, "
    "contracts and costs, incident reports, press releases",
}


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def save(name: str, rows: list[dict[str, Any]], folder: Path = RESULTS) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.json"
    machine = {"python": platform.python_version(), "machine": platform.machine()}
    path.write_text(json.dumps({"machine": machine, "rows": rows}, indent=2))
    return path


def print_table(rows: list[dict[str, Any]]) -> None:
    columns = list(rows[0])
    widths = [max(len(c), *(len(_fmt(r[c])) for r in rows)) for c in columns]
    print("  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True)))
    for row in rows:
        print("  ".join(_fmt(row[c]).ljust(w) for c, w in zip(columns, widths, strict=True)))


def _fmt(value: Any) -> str:
    return f"{value:.3f}" if isinstance(value, float) else str(value)
