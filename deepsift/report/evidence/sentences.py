"""Each section's evidence, chosen without a model: the excerpt sentences that answer its part
of the question, by nearness to the part, the names and figures they share with it, and whether
the part's own search found them; no sentence in two sections, the strongest first. The model
then writes from those sentences only (deepsift.report.writing.writer)."""

import re

import numpy as np
from pydantic import BaseModel

from deepsift.llm.embedders import Embedder, similarities
from deepsift.records import Chunk
from deepsift.report.checks.claims import names
from deepsift.report.checks.defects import defects
from deepsift.text.amounts import numbers
from deepsift.text.asks import about_figures
from deepsift.text.markup import plain
from deepsift.text.sentences import split_sentences
from deepsift.text.terms import held_shares, stem, terms
from deepsift.text.words import words

SHORTEST, LONGEST = 5, 80  # words of a sentence kept as evidence
ANSWERED = 1  # evidence sentences a part needs, or it is declared unanswered
NAME_BONUS, NAMES_COUNTED = 0.04, 3  # per name of the part the sentence holds
FIGURE_BONUS = 0.08  # a sentence with figures, for a part that asks for them
OWN_SEARCH_BONUS = 0.15  # found by the part's own search (hybrid: its words and meaning)
TERMS_BONUS = 0.15  # times the share of the part's terms (weighted by rarity) it holds
# A document's opening (its summary, abstract or purpose) states its main facts most densely.
OPENING_BONUS = 0.08
# The documents a part's own search ranks first are about it: their sentences lead, the first
# document's most.
LEAD_BONUS, LEADS = 0.1, 3
_EXCERPT_TAG = re.compile(r"</?excerpt>", re.IGNORECASE)  # a small model copies the quote marks
_RULE = re.compile(r"[-=_*~]{3,}")  # a rule drawn in text ("SUMMARY -------")


class Evidence(BaseModel):
    """One sentence of an excerpt, chosen for a part."""

    text: str
    chunk: Chunk
    score: float


class PlannedSection(BaseModel):
    part: int  # the index of the part it answers
    evidence: list[Evidence]  # the part's first chosen document's first, each best first

    @property
    def chunks(self) -> list[Chunk]:
        """The excerpts its evidence comes from, in order of their best sentence."""
        return list({e.chunk.id: e.chunk for e in self.evidence}.values())


def sentences_of(chunk: Chunk) -> list[str]:
    """The chunk's passage as sentences a report can restate: prose, list items and table rows;
    no headings, code or context line. A sentence that introduces a list carries the list (or,
    when that is too long, goes); a line that heads a paragraph without ending as a sentence
    does ("Purpose of this note This note ..." is no sentence); markup goes
    (deepsift.report.checks.defects); a sentence cut short goes too."""
    text = chunk.body
    units: list[str] = []
    code = False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            code = not code
            continue
        if code or not stripped or stripped.startswith("#") or line.startswith(("    ", "\t")):
            units.append("")
            continue
        if _RULE.search(stripped):  # "SUMMARY ------": a heading drawn in text stands alone
            units += ["", _RULE.sub(" ", stripped), ""]
            continue
        if stripped.startswith("|"):
            cells = [c.strip(" *") for c in stripped.strip("|").split("|")]
            cells = [c for c in cells if c and not set(c) <= set("-: ")]
            units += ["", ": ".join(cells), ""] if len(cells) > 1 else [""]
        elif re.match(r"([-*+]|\d+[.)])\s", stripped):
            units += ["", _ITEM + re.sub(r"^([-*+]|\d+[.)])\s+", "", stripped)]
        elif _heads_paragraph(stripped, units):
            units += [stripped, ""]
        else:
            units.append(stripped)
    paragraphs = _with_lists(" ".join(u if u else "\n" for u in units).split("\n"))
    kept = []
    for paragraph in paragraphs:
        for sentence in split_sentences(" ".join(plain(paragraph.replace("**", "")).split())):
            if _POINTS_WITHIN.search(sentence):  # "this section" cannot be named
                continue
            if sentence.endswith("?"):  # a document's open question states no fact
                continue
            caught = {*defects(sentence), *defects(as_prose(sentence))}
            if (
                SHORTEST <= len(sentence.split()) <= LONGEST
                and _prose(sentence)
                and not caught & {"fragment", "markup"}
            ):
                kept.append(sentence)
    return kept


_POINTS_WITHIN = re.compile(r"(?i)\b(this|the following|next|previous) (section|page|chapter)\b")
_ITEM = "\x02"  # marks a list item's paragraph until its list is joined to what introduces it
LIST_WORDS = 60  # a sentence and the list it introduces, at most, printed as one sentence


def _heads_paragraph(line: str, units: list[str]) -> bool:
    """A short line with no end of sentence opening a paragraph: a heading in plain text."""
    opens = not units or not units[-1]
    return opens and len(line.split()) <= 8 and not line.endswith((".", ",", ";", ":", "!", "?"))


def _with_lists(paragraphs: list[str]) -> list[str]:
    """Each paragraph that ends with a colon joined with the list items after it ("... three
    causes: storm damage; the inlet; steel prices."), or left out when that runs too long; a
    list item stands as itself."""
    joined: list[str] = []
    items: list[str] = []
    opener = ""

    def close() -> None:
        listed = "; ".join(re.sub(r"[\s.;,]*(?:\b(?:and|or))?[\s.;,]*$", "", i) for i in items)
        introduces = split_sentences(opener)[-1] if opener else ""
        if opener and items and len(f"{introduces} {listed}".split()) <= LIST_WORDS:
            joined.append(f"{opener} {listed}.")
        else:  # what introduces the list is then a fragment, which goes
            joined.extend(filter(None, [opener, *items]))

    for paragraph in (p.strip() for p in paragraphs):
        if not paragraph:
            continue
        if paragraph.startswith(_ITEM):
            items.append(paragraph.removeprefix(_ITEM).strip())
            continue
        close()
        items, opener = [], paragraph if paragraph.endswith(":") else ""
        if not opener:
            joined.append(paragraph)
    close()
    return joined


def as_prose(sentence: str) -> str:
    """An evidence sentence as a report prints it: one line, no emphasis marks, a capital
    first and a full stop last."""
    text = _EXCERPT_TAG.sub(" ", sentence.replace("**", "").replace("__", ""))
    text = " ".join(text.split()).strip()
    text = text[:1].upper() + text[1:]
    return text if text.endswith((".", "!", "?", '"', "”")) else f"{text.rstrip(':;,')}."


# Openings that lean on a sentence before them ("This would have cost …").
_LEANS_BACK = re.compile(
    r"^(?:it|its|this|these|that|those|they|their|he|she|his|her|there|such|both|however|"
    r"therefore|also|then|so|but|and|or|would|could|should|will|was|were)\b",
    re.IGNORECASE,
)
_LABEL = re.compile(r"^[^.:]{1,40}:\s")  # a label's "Name: value" form


def leans_back(sentence: str) -> bool:
    """Whether a sentence opens by leaning on the one before it ("This would have cost …")."""
    return bool(_LEANS_BACK.match(sentence.strip()))


def reads_alone(sentence: str) -> bool:
    """Whether an evidence sentence reads as a report's sentence as it stands: no opening that
    leans on the sentence before it, no label, no table row, a full stop at its end."""
    text = sentence.strip()
    return (
        bool(text)
        and not leans_back(text)
        and not _LABEL.match(text)
        and text.endswith((".", "!", "?"))
    )


def _prose(sentence: str) -> bool:
    """Not code, and not a letterhead or a title ("LAKE VELDMERE WATER AUTHORITY - INCIDENT
    REPORT"): most of a sentence's words are in lower case."""
    symbols = sum(ch in "{}();=<>&|" for ch in sentence)
    said = sentence.split()
    # One opening in lower case is a piece of a sentence that a page or a line broke.
    whole = not sentence[:1].islower()
    return (
        whole
        and symbols <= len(sentence) / 15
        and sum(w[:1].islower() for w in said) >= 0.4 * len(said)
    )


def plan(
    parts: list[str],
    queries: list[list[str]],
    chunks: list[Chunk],
    embedder: Embedder,
    sections: int,
    per_section: int,
    leads: list[list[tuple[str, str]]] | None = None,
    chosen: list[list[tuple[str, str]]] | None = None,
) -> tuple[list[PlannedSection], list[int]]:
    """One section for each of the first `sections` parts that evidence answers, of at most
    `per_section` evidence sentences, and the parts no evidence answers. `queries[i]` are what
    part i was searched with, `leads[i]` the documents (collection, source) its search found,
    best first, `chosen[i]` the documents that answer it (deepsift.report.evidence.choice):
    its evidence comes from those only, the first of them first; `chunks` every excerpt
    gathered, best first."""
    candidates = _candidates(chunks)
    if not parts or not candidates:
        return [], list(range(len(parts)))
    scores = _scores(parts, queries, candidates, embedder, leads or [[] for _ in parts])
    # A sentence goes to the part it stands out for: a part near every sentence (the subject
    # the whole question is about) would otherwise take the others' evidence.
    spread = scores.std(axis=1, keepdims=True).clip(1e-6)
    standing = (scores - scores.mean(axis=1, keepdims=True)) / spread
    if chosen is not None:
        # Only to a part that chose its document, and of those, to the ones it was chosen
        # for first ("the 2019 roadmap" takes the 2019 RFC's sentences, not "2020").
        rank = np.array(
            [[_rank(documents, chunk) for _, chunk in candidates] for documents in chosen]
        )
        scores = np.where(np.isfinite(rank), scores, -np.inf)
        standing = np.where(rank == rank.min(axis=0), standing, -np.inf)
    best = standing.argmax(axis=0)
    picked: list[list[Evidence]] = [[] for _ in parts]
    for i, (text, chunk) in enumerate(candidates):
        part = int(best[i])
        if scores[part, i] >= embedder.cuts.relevant:  # else it answers no part
            picked[part].append(Evidence(text=text, chunk=chunk, score=float(scores[part, i])))
    for n, evidence in enumerate(picked):
        evidence.sort(key=lambda e: -e.score)
        del evidence[per_section:]
        if chosen is not None:  # its documents in the order chosen, each best first
            order = {document: k for k, document in enumerate(chosen[n])}
            evidence.sort(key=lambda e: order[e.chunk.collection, e.chunk.source])
    answered = [n for n, evidence in enumerate(picked) if len(evidence) >= ANSWERED]
    unanswered = [n for n in range(len(parts)) if n not in answered[:sections]]
    return [PlannedSection(part=n, evidence=picked[n]) for n in answered[:sections]], unanswered


def _rank(documents: list[tuple[str, str]], chunk: Chunk) -> float:
    """Where the chunk's document stands among a part's chosen documents (inf: not chosen)."""
    document = (chunk.collection, chunk.source)
    return float(documents.index(document)) if document in documents else np.inf


def _candidates(chunks: list[Chunk]) -> list[tuple[str, Chunk]]:
    """Each sentence of the chunks once (a document repeated in two chunks, or two copies of a
    document, gives it once: from the better-ranked chunk)."""
    seen: set[str] = set()
    found = []
    for chunk in chunks:
        for sentence in sentences_of(chunk):
            key = " ".join(sentence.casefold().split())
            if key not in seen:
                seen.add(key)
                found.append((sentence, chunk))
    return found


def _scores(
    parts: list[str],
    queries: list[list[str]],
    candidates: list[tuple[str, Chunk]],
    embedder: Embedder,
    leads: list[list[tuple[str, str]]],
) -> np.ndarray:
    """parts x sentences: the best nearness of a part's queries to the sentence, plus the
    bonuses for the part's names it holds, its figures, the part's own search, a document's
    opening and the documents the part's search ranked first."""
    asked = [q for part_queries in queries for q in part_queries]
    owner = [n for n, part_queries in enumerate(queries) for _ in part_queries]
    # The sentence alone: under its document's title, a short sentence took the title's
    # nearness ("They can give quick short-term relief." led a part on phosphorus levels).
    near = similarities(embedder, asked, [text for text, _ in candidates], documents=True)
    scores = np.full((len(parts), len(candidates)), -1.0)
    for row, n in enumerate(owner):
        scores[n] = np.maximum(scores[n], near[row])
    held = [set(names(f"{chunk.title} {text}")) for text, chunk in candidates]
    # Names most sentences hold (the question's subject) tell no part's evidence apart.
    common = {name for name in set().union(*held) if sum(name in h for h in held) > len(held) / 4}
    # A part's terms are weighed against every stem of each sentence, its stopwords too.
    bags = [{stem(w) for w in words(text.casefold())} for text, _ in candidates]
    for n, part in enumerate(parts):
        for i, share in enumerate(held_shares(terms(part), bags)):
            scores[n, i] += TERMS_BONUS * share
    for n, part in enumerate(parts):
        wanted = set(names(part)) - common
        figures = about_figures(part)
        lead = leads[n][:LEADS]
        for i, (text, chunk) in enumerate(candidates):
            scores[n, i] += NAME_BONUS * min(len(wanted & held[i]), NAMES_COUNTED)
            scores[n, i] += FIGURE_BONUS * (figures and bool(numbers(text)))
            scores[n, i] += OWN_SEARCH_BONUS * any(q in chunk.queries for q in [part, *queries[n]])
            scores[n, i] += OPENING_BONUS * (chunk.position == 0)
            if (document := (chunk.collection, chunk.source)) in lead:
                scores[n, i] += LEAD_BONUS / (1 + lead.index(document))
    return scores
