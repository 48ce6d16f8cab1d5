"""Summaries of evaluation results: one row per (agent, max_iterations), as JSON, Markdown, PNG."""

import json
from collections import defaultdict
from pathlib import Path
from statistics import mean
from typing import Any

RETRIEVAL_COLUMNS = ["recall@2", "recall@5", "recall@10", "all@10"]
ANSWER_COLUMNS = ["em", "f1", "judge"]
COST_COLUMNS = ["rounds", "llm_calls", "prompt_tokens", "completion_tokens", "seconds"]


def summarize(rows: list[dict[str, Any]], mode: str) -> list[dict[str, Any]]:
    """Means per (agent, max_iterations) over the questions that every one of them finished, so
    that they compare on the same questions (`left_out` counts the others); a question that
    errored counts as 0 for quality."""
    groups: dict[tuple[str, int], list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        groups[(row["agent"], row["max_iterations"])].append(row)
    shared = set.intersection(*({r["id"] for r in g} for g in groups.values())) if groups else set()
    quality = RETRIEVAL_COLUMNS + (ANSWER_COLUMNS if mode == "answers" else [])
    summary = []
    for (agent, bound), everything in sorted(groups.items()):
        group = [r for r in everything if r["id"] in shared]
        if not group:
            continue
        ok = [r for r in group if not r.get("error")]
        line: dict[str, Any] = {"agent": agent, "max_iterations": bound, "questions": len(group)}
        for column in quality:
            values = [float(r[column]) for r in ok if r.get(column) is not None]
            line[column] = round(sum(values) / len(group), 4) if values else None
        for column in COST_COLUMNS:
            line[column] = round(mean(r[column] for r in ok), 2) if ok else None
        line["left_out"] = len(everything) - len(group)
        line["errors"] = round(1 - len(ok) / len(group), 4)
        summary.append(line)
    return summary


def markdown_table(summary: list[dict[str, Any]]) -> str:
    if not summary:
        return "(no results yet)\n"
    columns = list(summary[0])
    header = "| " + " | ".join(columns) + " |"
    rule = "|" + "|".join("---" for _ in columns) + "|"
    body = ["| " + " | ".join(_cell(row[c]) for c in columns) + " |" for row in summary]
    return "\n".join([header, rule, *body]) + "\n"


def _cell(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.3f}" if value < 10 else f"{value:.1f}"
    return str(value)


def plot_recall(summary: list[dict[str, Any]], path: Path, metric: str = "recall@5") -> bool:
    """recall@5 against max_iterations per agent (naive, which does not iterate, as a line).
    Returns False when matplotlib is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    figure, axes = plt.subplots(figsize=(6, 4))
    bounds = sorted({row["max_iterations"] for row in summary if row["max_iterations"]}) or [1]
    for n, agent in enumerate(dict.fromkeys(row["agent"] for row in summary)):
        points = [(r["max_iterations"], r[metric]) for r in summary if r["agent"] == agent]
        points = [(x, y) for x, y in points if y is not None]
        if not points:
            continue
        if len(points) == 1 and points[0][0] == 0:
            axes.axhline(points[0][1], linestyle="dashed", color=f"C{n}", label=agent)
        else:
            axes.plot(*zip(*points, strict=True), marker="o", color=f"C{n}", label=agent)
    axes.set_xlabel("max_iterations")
    axes.set_ylabel(metric)
    axes.set_xticks(bounds)
    axes.set_ylim(0, 1)
    axes.grid(alpha=0.3)
    axes.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return True


def by_kind(rows: list[dict[str, Any]], mode: str) -> list[dict[str, Any]]:
    """The summary again for each question type or hop count the set gives (none: [])."""
    kinds = sorted({row.get("kind") or "" for row in rows} - {""})
    return [
        {"kind": kind, **line}
        for kind in kinds
        for line in summarize([r for r in rows if r.get("kind") == kind], mode)
    ]


def write_outputs(out: Path, rows: list[dict[str, Any]], mode: str) -> list[dict[str, Any]]:
    summary = summarize(rows, mode)
    kinds = by_kind(rows, mode)
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    (out / "summary_by_kind.json").write_text(json.dumps(kinds, indent=2))
    (out / "summary.md").write_text(
        markdown_table(summary)
        + (f"\nBy question type:\n\n{markdown_table(kinds)}" if kinds else "")
    )
    plot_recall(summary, out / "recall_at_5.png")
    return summary
