"""Follow-up questions about a document itself (who wrote it, when, its status or version, what
replaced it), answered in code from the facts stored with its chunks (deepsift.ingest.facts), in a
sentence that names the document: "Vitalik Buterin and Dankrad Feist wrote EIP-4844 (Shard Blob
Transactions)." No model call: the facts are the document's own, so nothing is left to judge.
The question's rules are English; a question in another language goes to the model."""

import re

from deepsift.followups.documents import IDENTIFIER, document_key, identifier_key
from deepsift.records import Chunk
from deepsift.report.checks.defects import DOCUMENT_KINDS
from deepsift.report.evidence.documents import label_of
from deepsift.text.terms import terms

_MADE = "authored|drafted|prepared|proposed|submitted"
_DATED = "written|created|published|issued|dated"
# What a question asks of a document, by the fact that answers it. Each pattern ends where the
# document is named, so that what follows can be checked to be the document ("who created
# GasToken" asks about GasToken, not about the proposal that mentions it).
_ASKS = [
    ("authors", re.compile(r"(?i)\bwho (?:wrote|authored|drafted|prepared|proposed|submitted)\b")),
    ("authors", re.compile(r"(?i)\bwho (?:is|are|was|were) the (?:authors?|writers?)\s+of\b")),
    (
        "authors",
        re.compile(rf"(?i)\bwho (?:was|were|is) \S+(?: \S+){{0,6}}? (?:written|{_MADE}) by\b"),
    ),
    (
        "date",
        re.compile(rf"(?i)\bwhen (?:was|were|is) (?=.*\b(?:{_DATED}|{_MADE})\b)"),
    ),
    (
        "status",
        re.compile(
            r"(?i)\bwhat (?:is|was|'s) (?:the )?status of\b|\bwhat status (?:does|did|has|had)\b"
        ),
    ),
    ("version", re.compile(r"(?i)\b(?:which|what) version (?:of \S+ )?(?:does|did|is|was)\b")),
    (
        "replaces",
        re.compile(
            r"(?i)\b(?:what|which)\b.{0,40}\b(?:did|does) (?=.*\b(?:replace|supersede|obsolete)\b)"
        ),
    ),
    (
        "replaced_by",
        re.compile(r"(?i)\b(?:what|which)\b.{0,40}?\b(?:replaced|superseded|obsoleted)\b"),
    ),
]
# "it", "the proposal", "this report": the document itself ("that" alone is as often a clause).
_ITSELF = re.compile(rf"(?i)\b(it|its|(?:the|this|that) (?:{DOCUMENT_KINDS}|one))\b")


def asked_fact(question: str, document: Chunk | None) -> str:
    """The fact `question` asks of `document` ("authors", "date", "status", "version",
    "replaces", "replaced_by"), or "" where it asks something else or of something else."""
    if document is None:
        return ""
    for fact, pattern in _ASKS:
        if (asked := pattern.search(question)) and _names(question[asked.start() :], document):
            return fact
    return ""


def _names(phrase: str, document: Chunk) -> bool:
    """Whether the question's words from its fact word on name `document`: its identifier, "it"
    or "the proposal", or most of its title's words."""
    named = {identifier_key("".join(m.group(1, 3))) for m in IDENTIFIER.finditer(phrase)}
    if document_key(document) in named:
        return True
    if _ITSELF.search(phrase):
        return True
    title = terms(str(document.facts.get("title") or document.title))
    return bool(title) and len(title & terms(phrase)) >= 0.5 * len(title)


def fact_sentence(fact: str, document: Chunk, related: dict[str, Chunk]) -> str:
    """The answer, in a sentence naming the document; "" where its facts do not hold it.
    `related`: the documents it names that were found, by identifier key, to name them whole."""
    value = document.facts.get(fact)
    if not value:
        return ""
    label = label_of(document)
    values = value if isinstance(value, list) else [value]
    if fact in ("replaces", "replaced_by"):
        values = [
            label_of(related[k]) if (k := identifier_key(v)) in related else v for v in values
        ]
    listed = _listed([str(v) for v in values])
    return {
        "authors": f"{listed} wrote {label}.",
        "date": f"{label} is dated {listed}.",
        "status": f"The status of {label} is {listed}.",
        "version": f"{label} gives its version as {listed}.",
        "replaces": f"{label} replaces {listed}.",
        "replaced_by": f"{label} was replaced by {listed}.",
    }[fact]


def _listed(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


# How each fact reads in a passage shown to the model: prose, never "Key: value" (a small
# model pastes a field list whole as its answer).
_IN_PROSE = {
    "authors": "written by",
    "date": "dated",
    "status": "with the status",
    "version": "for version",
    "replaces": "replacing",
    "replaced_by": "replaced by",
    "summary": "about",
}


def facts_prose(document: Chunk) -> str:
    """The document's facts as one passage: "EIP-4844 (Shard Blob Transactions), written by
    …; dated 2022-02-25; with the status Final; about …"."""
    said = []
    for fact, words in _IN_PROSE.items():
        if value := document.facts.get(fact):
            said.append(
                f"{words} {_listed([str(v) for v in value]) if isinstance(value, list) else value}"
            )
    return f"{label_of(document)}, {'; '.join(said).rstrip('.!?')}." if said else ""
