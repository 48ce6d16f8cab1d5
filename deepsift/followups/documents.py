"""Which documents a follow-up question is about, found before any passage is read: those it
names by identifier ("EIP-4844", "PEP 8"), looked up in the run's sources where the run never
held them; else the one its words describe ("the blob fee proposal", "the review written after
the plant was finished"), chosen among the documents the run and the new search hold as the
report chooses a part's documents (deepsift.report.evidence.choice), by status where the
question asks for "the one that was rejected" or "superseded", by date for "the first"."""

import re

import numpy as np

from deepsift.deps import Deps
from deepsift.records import Chunk
from deepsift.report.evidence.choice import DATED_MARGIN, cards_of, dated_as, document_scores
from deepsift.retrieval.search import filed_documents
from deepsift.text.terms import terms

# "EIP-4844", "PEP 8", "RFC3085", and the number bracketed after its kind: "the 2021 Edition RFC
# (3085)".
IDENTIFIER = re.compile(r"\b([A-Za-z]{2,5})([- ]?| \()0*(\d{1,6})\b")
LOOKUPS = 5  # stored documents filed under a named number, read to find the one it names
# A question that picks a document by its standing, and the statuses (or the fact) that fit.
_STANDING = [
    (
        re.compile(r"(?i)\b(accepted|approved|adopted|won|final(?:ised|ized)?|implemented)\b"),
        re.compile(r"(?i)\b(accepted|approved|adopted|final|active|implemented)\b"),
    ),
    (
        re.compile(r"(?i)\b(rejected|withdrawn|declined|abandoned|postponed|deferred)\b"),
        re.compile(r"(?i)\b(rejected|withdrawn|declined|abandoned|postponed|deferred)\b"),
    ),
]
# "According to the minutes of the Board meeting of 14 September 2021, which fund …": an opening
# that says which document the question is asked of; it is weighed beside the whole question.
_SOURCE = re.compile(
    r"(?i)^(?:according to|in)\s+((?:the|an?)\s.+?),\s+"
    r"(?=(?:what|which|who|whose|how|when|where|why|did|does|do|is|was|are|were|at|from|by)\b)"
)
_SUPERSEDED = re.compile(r"(?i)\b(was|were|been|got|is) (superseded|replaced|obsoleted)\b")


def identifier_key(identifier: str) -> str:
    """'EIP-4844', 'eip 4844' and 'EIP4844' as one key."""
    named = IDENTIFIER.fullmatch(identifier.strip())
    return f"{named[1].casefold()}{int(named[3])}" if named else identifier.strip().casefold()


def document_key(chunk: Chunk) -> str:
    """The key of the identifier a chunk's document carries in its facts ("" where none)."""
    return identifier_key(str(chunk.facts.get("id", ""))) if chunk.facts.get("id") else ""


def named_documents(
    question: str, chunks: list[Chunk], deps: Deps, sources: list[str]
) -> list[Chunk]:
    """The documents `question` names by identifier, each as one chunk that carries its facts:
    from `chunks` where they hold it, else looked up in the collections `sources`."""
    held = {}
    for chunk in chunks:
        if key := document_key(chunk):
            held.setdefault(key, chunk)
    found = []
    for acronym, joint, number in IDENTIFIER.findall(question):
        if joint in (" ", " (") and not acronym.isupper():
            continue  # "for 2 days" names nothing; "eip 4844" is taken written as "EIP 4844"
        key = f"{acronym.casefold()}{int(number)}"
        chunk = held.get(key) or _stored(key, number, deps, sources)
        if chunk is not None and chunk not in found:
            found.append(chunk)
    return found


def _stored(key: str, number: str, deps: Deps, sources: list[str]) -> Chunk | None:
    """The stored document whose identifier is `key`, among those filed under its number."""
    for chunk in filed_documents(number, sources, deps, LOOKUPS):
        if document_key(chunk) == key:
            return chunk
    return None


def described_document(question: str, chunks: list[Chunk], deps: Deps, leads: list) -> Chunk | None:
    """The document among `chunks` that the question describes: the one the report's document
    choice scores best for it (its title, summary and best passage near the question, and near
    an opening that says which document it is asked of, "According to the review written
    after …,"; the new search's ranking), among those with the standing it asks for where any
    has it ("the one that was rejected"); the earliest or latest of those near the best for
    "the first"."""
    cards = cards_of(chunks)
    if not cards:
        return None
    source = _SOURCE.match(question)
    asked = [question, source[1]] if source else [question]
    scores = document_scores([asked], cards, deps.embedder, [leads])[0]
    order = [int(i) for i in np.argsort(-scores)]
    standing = [i for i in order if _fits_standing(question, cards[i].chunks[0])]
    picks = bool(standing) and len(standing) < len(order)
    order = standing or order
    if not picks and not dated_as(question) and not terms(question) & terms(cards[order[0]].text):
        return None  # "Who wrote it?" describes no document: any would be a guess
    if dated := dated_as(question):
        near = [i for i in order if scores[i] >= scores[order[0]] - DATED_MARGIN]
        dates = [i for i in near if cards[i].date[0] == 0]  # dated ones only
        if dates:
            return cards[
                (min if dated == "first" else max)(dates, key=lambda i: cards[i].date)
            ].chunks[0]
    return cards[order[0]].chunks[0]


def _fits_standing(question: str, chunk: Chunk) -> bool:
    """Whether the document has the standing the question picks it by (any, where it picks by
    none): a status it asks for, or having been superseded."""
    status = str(chunk.facts.get("status", ""))
    wanted = [has for asks, has in _STANDING if asks.search(question)]
    if _SUPERSEDED.search(question):
        return bool(chunk.facts.get("replaced_by")) or "supersed" in status.casefold()
    return all(has.search(status) for has in wanted)
