"""Read benchmark files into one shape: question, answer, gold titles and context paragraphs
(Wikipedia-shaped sets), or gold files of a document folder (`--corpus`)."""

import csv
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from deepsift.errors import UserError

Format = Literal["2wiki", "hotpotqa", "musique", "csv", "folder"]
FORMATS: tuple[str, ...] = ("2wiki", "hotpotqa", "musique", "csv", "folder")


@dataclass
class EvalQuestion:
    id: str
    question: str
    answer: str
    gold_titles: list[str] = field(default_factory=list)
    paragraphs: list[tuple[str, str]] = field(default_factory=list)  # (title, text)
    kind: str = ""  # the set's question type (2Wiki, HotpotQA) or hop count (MuSiQue: "3-hop")
    gold_sources: list[str] = field(default_factory=list)  # folder: files, relative to it


def dataset_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def guess_format(path: Path) -> Format:
    if path.suffix.lower() == ".csv":
        return "csv"
    head = path.read_text(encoding="utf-8")[:20_000]
    if '"gold_sources"' in head:
        return "folder"
    return "musique" if '"paragraphs"' in head else "2wiki"


def load_dataset(path: Path, format: Format | None = None) -> list[EvalQuestion]:
    if not path.is_file():
        raise UserError(f"dataset {path} does not exist")
    format = format or guess_format(path)
    try:
        if format == "csv":
            return _load_csv(path)
        records = _read_records(path)
        loader = {"musique": _load_musique, "folder": _load_folder}.get(format, _load_context_style)
        return [loader(record, n) for n, record in enumerate(records)]
    except (KeyError, TypeError, IndexError) as e:
        raise UserError(
            f"dataset {path} is not in {format} format (field {e} missing or malformed); "
            f"choose --format from {', '.join(FORMATS)}"
        ) from None


def _read_records(path: Path) -> list[dict]:
    text = path.read_text(encoding="utf-8")
    try:
        if path.suffix.lower() == ".jsonl":  # JSON lines, as MuSiQue ships
            data = [json.loads(line) for line in text.splitlines() if line.strip()]
        else:
            data = json.loads(text)
    except json.JSONDecodeError as e:
        raise UserError(f"dataset {path} is not valid JSON (or .jsonl lines): {e}") from None
    if not isinstance(data, list):
        raise UserError(f"dataset {path} must hold a list of questions")
    return data


def _load_context_style(record: dict, n: int) -> EvalQuestion:
    """2WikiMultiHopQA and HotpotQA: context [[title, [sentences]]], supporting_facts
    [[title, sentence index]]."""
    paragraphs = [
        (title, " ".join(s.strip() for s in sentences)) for title, sentences in record["context"]
    ]
    gold = list(dict.fromkeys(title for title, _ in record["supporting_facts"]))
    return EvalQuestion(
        id=str(record.get("_id", record.get("id", n))),
        question=record["question"],
        answer=str(record["answer"]),
        gold_titles=gold,
        paragraphs=paragraphs,
        kind=str(record.get("type", "")),
    )


def _load_musique(record: dict, n: int) -> EvalQuestion:
    paragraphs = [(p["title"], p["paragraph_text"]) for p in record["paragraphs"]]
    gold = [p["title"] for p in record["paragraphs"] if p.get("is_supporting")]
    return EvalQuestion(
        id=str(record.get("id", n)),
        question=record["question"],
        answer=str(record.get("answer", "")),
        gold_titles=list(dict.fromkeys(gold)),
        paragraphs=paragraphs,
        kind=f"{len(record['question_decomposition'])}-hop"
        if record.get("question_decomposition")
        else "",
    )


def _load_folder(record: dict, n: int) -> EvalQuestion:
    """Questions about a folder of documents: {"id", "question", "answer", "gold_sources": [file
    paths relative to the folder], "kind"}."""
    gold = record["gold_sources"]
    if not isinstance(gold, list) or not gold or not all(isinstance(g, str) for g in gold):
        raise TypeError("gold_sources")
    return EvalQuestion(
        id=str(record.get("id", n)),
        question=record["question"],
        answer=str(record.get("answer", "")),
        kind=str(record.get("kind", "")),
        gold_sources=list(dict.fromkeys(gold)),
    )


def _load_csv(path: Path) -> list[EvalQuestion]:
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    if rows and not {"question", "true_answer"} <= set(rows[0]):
        raise UserError(f"dataset {path} needs the columns question,true_answer")
    return [
        EvalQuestion(id=str(n), question=r["question"], answer=r["true_answer"])
        for n, r in enumerate(rows)
    ]
