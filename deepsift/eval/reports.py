"""`deepsift eval reports`: research each question, then score every report without a model
(and, with --judge, by a rubric from a judge endpoint). The scores are the grader's own rules
(deepsift.eval.reader, deepsift.eval.figures; the yardstick is ../shared/tools/score_reports.py),
never the filters that wrote the report: a grade by those could not see what they miss."""

import json
import re
from collections.abc import Callable
from pathlib import Path, PurePosixPath

import openai
from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from deepsift.api import ResearchResult, research
from deepsift.config import Settings
from deepsift.deps import Deps
from deepsift.errors import UserError
from deepsift.eval.figures import figures, names, unheld
from deepsift.eval.reader import KINDS, defects, repeats
from deepsift.ingest.facts import facts_text
from deepsift.llm.structured import ask_structured
from deepsift.prompts import judge as prompt
from deepsift.records import Chunk, Source, Usage
from deepsift.report.output.headings import Labels, echoes_query, is_english, labels
from deepsift.report.question.parts import question_parts
from deepsift.text.marks import cited, without_marks
from deepsift.text.sentences import split_sentences
from deepsift.text.words import words

# Scored only when the question gives facts (rubric, lead) or gold documents (gold_cited,
# of_cited).
GRADED = ["rubric", "lead", "gold_cited", "of_cited"]
COLUMNS = [
    "reader_defects",
    "fragment",
    "voice",
    "deictic",
    "markup",
    "off_part",
    "words",
    "sections",
    "reader_headings",
    "cited_share",
    "claim_pass",
    "unheld_numbers",
    "repeated",
    "parts_concluded",
    "quoted",
    "documents",
    "llm_calls",
    "seconds",
]


class Fact(BaseModel):
    """A fact a good report states, found by any of its lower-case substrings."""

    fact: str
    any_of: list[str] = Field(min_length=1)


class ReportQuestion(BaseModel):
    id: str
    question: str
    length: str | None = None
    language: str | None = None
    facts: list[Fact] = []
    gold_sources: list[str] = []  # file names of the documents that answer it


class Rubric(BaseModel):
    comprehensiveness: int = Field(ge=1, le=10)
    depth: int = Field(ge=1, le=10)
    instruction_following: int = Field(ge=1, le=10)
    readability: int = Field(ge=1, le=10)


def load_questions(path: Path) -> list[ReportQuestion]:
    """Lines {"id", "question"} (optional "length", "language"); a bad line is named."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise UserError(f"cannot read questions file {path}: {e}") from e
    questions = []
    for n, line in enumerate(lines, 1):
        if line.strip():
            try:
                questions.append(ReportQuestion.model_validate_json(line))
            except ValueError as e:
                first = str(e).splitlines()[0]
                raise UserError(f'{path}:{n}: not a {{"id", "question"}} line ({first})') from e
    if not questions:
        raise UserError(f"{path} has no questions")
    return questions


def body_of(report: str, says: Labels | None = None) -> str:
    """The prose of the summary, sections and conclusion: no title, headings, tables, Notes or
    Sources."""
    body = _before_notes(report, says or labels(""))
    return "\n".join(line for line in body.splitlines() if not line.startswith(("#", "|")))


def _before_notes(report: str, says: Labels) -> str:
    return re.split(rf"\n## (?:{re.escape(says.notes)}|{re.escape(says.sources)})\n", report)[0]


def cited_sentences(report: str, says: Labels | None = None) -> list[tuple[str, list[int]]]:
    """The body's sentences, each with the excerpt marks it rests on: its own, or those of the
    next marked sentence of its paragraph or bullet (a cited statement of several sentences
    carries its marks at its end)."""
    said = []
    for paragraph in re.split(r"\n\s*\n|\n(?=- )", body_of(report, says)):
        text = " ".join(paragraph.removeprefix("- ").split())
        sentences = [s.strip() for s in split_sentences(text) if s.strip()]
        marks: list[int] = []
        for sentence in reversed(sentences):
            marks = cited(sentence) or marks
            said.append((sentence, marks))
    return said


def rubric(report: str, facts: list[Fact], language: str = "") -> float:
    """The share of `facts` the report states: any of a fact's substrings in its text before
    the Notes and Sources, case set aside (1.0 when there are none)."""
    return _stated(_before_notes(report, labels(language)), facts)


def _stated(text: str, facts: list[Fact]) -> float:
    said = text.casefold()
    stated = sum(any(s.casefold() in said for s in fact.any_of) for fact in facts)
    return round(stated / len(facts), 3) if facts else 1.0


def lead(report: str, facts: list[Fact], language: str = "") -> float:
    """The share of `facts` stated where a reader looks first: a key finding, or the first two
    sentences of a section (the title's and the conclusion's too; the Documents table aside)."""
    says = labels(language)
    first = []
    for section in re.split(r"\n(?=## )", _before_notes(report, says)):
        heading, _, text = section.partition("\n")
        if heading == f"## {says.findings}":
            first.append(text)
        elif heading != f"## {says.documents[0]}":
            prose = " ".join(line for line in text.splitlines() if not line.startswith(("#", "|")))
            first += split_sentences(" ".join(prose.split()))[:2]
    return _stated("\n".join(first), facts)


def quoted(report: str, says: Labels | None = None) -> float:
    """The share of the body's sentences (of four words or more) that quote a document ("RFC
    2052 says: “…”"): quotation is for wording that matters, not a way to fill a section."""
    said = [s for s, _ in cited_sentences(report, says) if len(s.split()) > 3]
    quoting = sum(bool(re.search(r"\bsays?:\s*[“\"]", s)) for s in said)
    return round(quoting / len(said), 3) if said else 0.0


def cited_files(report: str, says: Labels | None = None) -> set[str]:
    """The file names of the documents the report's Sources list (a URL's last segment)."""
    sources = report.partition(f"\n## {(says or labels('')).sources}\n")[2]
    return {PurePosixPath(path).name for path in re.findall(r"`([^`]+)`\s*$", sources, re.M)}


def gold_shares(cited: set[str], gold: list[str]) -> dict[str, float]:
    """The share of the gold documents cited, and of the cited documents that are gold (none
    when nothing is cited)."""
    found = len(cited & set(gold))
    shares = {"gold_cited": round(found / len(gold), 3)}
    return shares | ({"of_cited": round(found / len(cited), 3)} if cited else {})


def graded(report: str, question: ReportQuestion, language: str = "") -> dict[str, float]:
    """The columns of GRADED that the question's facts and gold documents allow."""
    row: dict[str, float] = {}
    if question.facts:
        row["rubric"] = rubric(report, question.facts, language)
        row["lead"] = lead(report, question.facts, language)
    if question.gold_sources:
        row |= gold_shares(cited_files(report, labels(language)), question.gold_sources)
    return row


def research_and_score(
    questions: list[ReportQuestion],
    out: Path,
    settings: Settings,
    deps: Deps,
    sources: list[str] | None,
    length: str | None = None,
    judge_llm=None,
    on_row: Callable[[list[dict]], None] = lambda rows: None,
) -> list[dict]:
    """Research every question in `sources`, save its report as out/reports/ID.md and score
    it, one row each (`on_row` sees the rows so far); a failed question is a row with its
    error, except an endpoint that cannot be reached or refuses the key, which stops all."""
    (out / "reports").mkdir(parents=True, exist_ok=True)
    rows: list[dict] = []
    for question in questions:
        seen: dict = {"chunks": {}, "sources": []}  # what the run's updates carried
        try:
            result = research(
                question.question,
                settings,
                collections=sources,
                length=question.length or length,
                language=question.language,
                deps=deps,
                checkpoints=False,
                on_update=lambda _, update, seen=seen: _keep(seen, update),
            )
        except (openai.APIConnectionError, openai.AuthenticationError):
            raise
        except Exception as e:  # one question's failure is a result, not the end
            rows.append({"id": question.id, "error": f"{type(e).__name__}: {e}"})
            on_row(rows)
            continue
        (out / "reports" / f"{question.id}.md").write_text(result.report)
        language = question.language or settings.report_language
        row = {
            "id": question.id,
            **graded(result.report, question, language),
            **score(result, seen["sources"], seen["chunks"], language),
        }
        if judge_llm is not None:
            judged, _ = judge(judge_llm, question.question, result.report)
            row |= judged.model_dump() if judged else {}
        rows.append(row)
        on_row(rows)
    return rows


def _keep(seen: dict, update: dict) -> None:
    seen["chunks"].update(update.get("chunks", {}))
    seen["sources"] = update.get("sources", seen["sources"])


def score(
    result: ResearchResult,
    cited: list[Source],
    chunks: dict[str, Chunk],
    language: str = "",
) -> dict:
    """What a reader can count: words of the body, sections and those whose heading is written
    for a reader, the share of sentences that cite, the share of sentences whose numbers and
    names their cited excerpts hold, the numbers no cited excerpt holds, and the documents
    cited. `cited` are the run's sources with the ids of the chunks cited from each (from its
    last update), `chunks` every chunk it retrieved."""
    texts = {s.n: [_excerpt(chunks[i]) for i in s.chunk_ids if i in chunks] for s in cited}
    check_names = is_english(language)
    says = labels(language)
    said = cited_sentences(result.report, says)
    checked = passed = unheld_figures = 0
    for sentence, cites in said:
        if not (figures(sentence) or (check_names and names(sentence))):
            continue
        evidence = [t for n in cites for t in texts.get(n, [])] + [result.question]
        checked += 1
        passed += not unheld(sentence, evidence, check_names)
        unheld_figures += len(unheld(sentence, evidence, check_names=False))
    fixed = {says.findings, says.conclusion, says.notes, says.sources, says.documents[0]}
    headings = [h for h in re.findall(r"^## (.*)$", result.report, re.MULTILINE) if h not in fixed]
    return {
        # what a reader stops at (deepsift.eval.reader; ../shared/tools/reader_check.py)
        **reader_counts(result.report, result.question, says),
        "words": len(words(without_marks(body_of(result.report, says)))),
        "sections": len(headings),
        # written for a reader: neither a question nor a query of the run
        "reader_headings": sum(
            not echoes_query(h, [result.question, *result.sub_queries]) for h in headings
        ),
        "cited_share": round(sum(bool(m) for _, m in said) / len(said), 3) if said else 0.0,
        "claim_pass": round(passed / checked, 3) if checked else 1.0,
        "unheld_numbers": unheld_figures,
        "parts_concluded": concluded_share(result.report, result.question, says),
        "quoted": quoted(result.report, says),
        "documents": len(result.sources),
        "llm_calls": result.usage.llm_calls,
        "seconds": round(result.usage.seconds, 1),
    }


def _excerpt(chunk: Chunk) -> str:
    """What a sentence citing the chunk may rest on: its text and its document's facts."""
    return f"{chunk.text}\n{facts_text(chunk.facts)}"


def reader_counts(report: str, question: str, says: Labels | None = None) -> dict[str, int]:
    """What a reader stops at in the report's prose (tables aside), by kind (deepsift.eval.reader;
    the rules of ../shared/tools/reader_check.py), their total with the repeated sentences, and
    the sentences that answer no part of the question."""
    sentences = [without_marks(s) for s, _ in cited_sentences(report, says)]
    caught = [kind for sentence in sentences for kind in defects(sentence)]
    kinds = {kind: caught.count(kind) for kind in KINDS}
    repeated = repeats(sentences)
    return {
        "reader_defects": sum(kinds.values()) + repeated,
        **kinds,
        "repeated": repeated,
        "off_part": off_part(sentences, question),
    }


def off_part(sentences: list[str], question: str) -> int:
    """Sentences that answer no part of the question: not one of their content words (or its
    stem) is a word of the question. Crude: a word shared is not an answer."""
    asked = {_stem(w) for w in words(question.casefold()) if len(w) > 3}
    return sum(
        not asked & {_stem(w) for w in words(without_marks(s).casefold()) if len(w) > 3}
        for s in sentences
    )


def _stem(word: str) -> str:
    return word[:6]


def concluded_share(report: str, question: str, says: Labels) -> float:
    """The share of the question's parts (deepsift.report.question.parts) that the conclusion
    answers (a sentence with a word of the part that the other parts lack) or declares
    unanswered."""
    parts = question_parts(question)
    if not parts:
        return 1.0
    ending = report.split(f"\n## {says.conclusion}\n", 1)
    ending = ending[1].split("\n## ", 1)[0].casefold() if len(ending) > 1 else ""
    terms = [{w for w in words(p.casefold()) if len(w) > 3} for p in parts]
    concluded = 0
    for n, part in enumerate(parts):
        own = terms[n] - set().union(*(t for m, t in enumerate(terms) if m != n))
        declared = says.unanswered.format(part=part).casefold().rstrip(".") in ending
        concluded += declared or any(w in set(words(ending)) for w in own or terms[n])
    return round(concluded / len(parts), 3)


def judge(llm, question: str, report: str) -> tuple[Rubric | None, Usage]:
    messages = [
        SystemMessage(prompt.REPORT_SYSTEM),
        HumanMessage(prompt.REPORT_USER.format(question=question, report=report)),
    ]
    return ask_structured(llm, messages, Rubric, max_tokens=120)


def summary_table(rows: list[dict]) -> str:
    """One line per question and the mean of each column (over the rows that have it), as
    Markdown; a column no row has is left out."""
    every = [*GRADED, *COLUMNS, *Rubric.model_fields]
    columns = [c for c in every if any(c in r for r in rows)]
    lines = ["| id | " + " | ".join(columns) + " |", "|---" * (len(columns) + 1) + "|"]
    for row in rows:
        lines.append(f"| {row['id']} | " + " | ".join(str(row.get(c, "")) for c in columns) + " |")
    means = [sum(r[c] for r in rows if c in r) / max(1, sum(c in r for r in rows)) for c in columns]
    lines.append("| **mean** | " + " | ".join(_digits(m) for m in means) + " |")
    return "\n".join(lines) + "\n"


def _digits(mean: float) -> str:
    """At most three significant digits, and whole from 1,000: 1303 words, not 1.3e+03."""
    return f"{mean:.0f}" if mean >= 1000 else f"{float(f'{mean:.3g}'):g}"


def write_rows(out: Path, rows: list[dict]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "reports.jsonl").write_text(
        "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8"
    )
    (out / "summary.md").write_text(summary_table(rows), encoding="utf-8")
