"""The passages of a chunk that a follow-up's answer may rest on: its sentences (one that leans
on the sentence before it joined to it), list items and code blocks, with its document's facts
in one sentence; never a header's fields, a link line, or a piece of a sentence that a chunk
boundary cut off from the whole one its neighbour holds."""

import re

from deepsift.followups.facts import facts_prose
from deepsift.records import Chunk
from deepsift.report.checks.defects import defects
from deepsift.report.evidence.sentences import leans_back
from deepsift.text.sentences import split_sentences

PASSAGE_CHARS = 300  # of a code block or an overlong sentence, shown
# "Title: … Author: … Status: Final": a header's fields, the document's facts already.
_FIELD = re.compile(r"(?<![\w/:])[A-Za-z][\w-]*(?: [A-Za-z][\w-]*)?: (?!//)")
_LINK_LINE = re.compile(r"^\s*\[[^\]]+\]:\s*\S+")  # a Markdown link's target: "[x]: https://…"


def whole(candidates: list[tuple[str, Chunk, int]]) -> list[tuple[str, Chunk, int]]:
    """The candidates less what another passage of their document holds. Chunks overlap: one
    that starts mid-sentence ("140 ha of land, but …") repeats a piece of a sentence its
    neighbour holds whole ("It needs about 140 ha of land, but …"); that piece is left out."""
    texts = [(" ".join(p.split()).casefold(), c.source) for p, c, _ in candidates]
    # The facts' passage may repeat a sentence as its summary; it never stands for the sentence.
    facts = {i for i, (p, c, _) in enumerate(candidates) if p == facts_prose(c)}

    def held(text: str, i: int) -> bool:  # by a longer passage of its document, or one earlier
        return any(
            j != i
            and j not in facts
            and other == texts[i][1]
            and text in longer
            and (len(longer) > len(text) or j < i)
            for j, (longer, other) in enumerate(texts)
        )

    kept = []
    for i, (passage, chunk, rank) in enumerate(candidates):
        if held(texts[i][0], i):
            continue
        first, *rest = split_sentences(passage) or [passage]
        if rest and held(" ".join(first.split()).casefold(), i):
            passage = " ".join(rest)
        kept.append((passage, chunk, rank))
    return kept


def _joined(sentences: list[str]) -> list[str]:
    """Each sentence that leans on the one before it ("This would have cost about EUR
    60,000.") joined to it, where the two fit in a passage: alone it says nothing."""
    joined: list[str] = []
    for sentence in sentences:
        if joined and leans_back(sentence) and len(joined[-1]) + len(sentence) < PASSAGE_CHARS:
            joined[-1] = f"{joined[-1]} {sentence}"
        else:
            joined.append(sentence)
    return joined


def passages(chunk: Chunk, first: bool) -> list[str]:
    """The chunk as passages a short answer may rest on: its sentences and list items, each
    code block as one (cut to PASSAGE_CHARS), no headings or link lines; with `first`, its
    document's facts (authors, dates, status …) as one more."""
    text = chunk.body
    found = [facts_prose(chunk)] if first and facts_prose(chunk) else []
    for block in re.split(r"\n\s*\n", text):
        lines = [line for line in block.splitlines() if not _LINK_LINE.match(line)]
        if not lines or lines[0].lstrip().startswith("#"):
            lines = lines[1:]
        if not lines:
            continue
        if lines[0].lstrip().startswith(("```", "~~~", "    ")):
            code = " ".join(" ".join(lines).replace("```", " ").split())
            found.append(code[:PASSAGE_CHARS])
            continue
        prose, *items = re.split(r"\n\s*(?:[-*+]|\d+[.)])\s+", "\n" + "\n".join(lines))
        sentences = [
            s for s in _joined(split_sentences(" ".join(prose.split()))) if len(s.split()) >= 3
        ]
        items = [" ".join(item.split()) for item in items]
        if sentences and items and sentences[-1].endswith(":"):  # "… are: a; b; c."
            sentences[-1] = f"{sentences[-1]} {'; '.join(items)}."
            items = []
        found += [p[:PASSAGE_CHARS] for p in [*sentences, *items] if p and not fields(p)]
    return found


def fields(text: str) -> bool:
    """Whether `text` holds a run of two header fields ("Status: Final Type: …")."""
    return len(_FIELD.findall(text)) >= 2


def pasted(text: str) -> bool:
    """Whether an answer sentence is a paste, not prose: header fields, or source markup."""
    return fields(text) or "markup" in defects(text)
