"""What a reader catches in a report's sentence, and the fixes that need no model.

A sentence of a document, printed as the report's, keeps what only made sense inside that
document: "this RFC" (which one?), "we" and "our" (the authors speak as the report), markup
("``x``", "`Name`_", ":role:`x`", "[#note]_", tags), and the colon before a list that is not
there. Here a document is named by its own identifier (deepsift.ingest.facts), its voice is
quoted and attributed, markup goes, and what is still a fragment is caught."""

import re

from deepsift.ingest.facts import facts_text
from deepsift.records import Chunk

# Words a sentence cannot end on: it was cut before what it introduces ("... consensus on:").
_END_WORDS = set(
    """by on of to for with from the a an and or but that as is are was were be into at than
    such including include includes whether which who whose its their this these those via
    per about between""".split()
)
_KINDS = (
    "document|proposal|paper|report|article|section|page|specification|spec|note|memo|"
    "standard|study|review|chapter|guide"
)
# "this RFC", "this proposal": the document a sentence is in, unnamed.
_DEICTIC = re.compile(rf"\b([Tt])his ((?:[A-Z]{{2,5}})|{_KINDS})\b")
_VOICE = re.compile(r"\b(we|our|us|ours|I|my)\b", re.IGNORECASE)
_QUOTED = re.compile(r"[\"“][^\"”]*[\"”]")
_US = re.compile(r"\bU\.?S\.?\b")  # "US" is a country, not a voice
_MARKUP = re.compile(r"``|`_|:[a-z]+:`|\[#[^\]]*\]_|\]_\B|</?[a-zA-Z][a-zA-Z0-9]*(\s[^>]*)?>")
_MARKUP_FIXES = [
    (re.compile(r"!\[[^\]]*\]\([^)]*\)"), ""),  # a Markdown image
    (re.compile(r"\[([^\]]+)\]\((?:[^()]|\([^)]*\))*\)"), r"\1"),  # [text](target)
    (re.compile(r"\[([^\]]+)\]\[[^\]]*\]"), r"\1"),  # [text][ref]
    (re.compile(r":[\w:+-]+:`([^`<]*?)\s*(?:<[^`>]*>)?`"), r"`\1`"),  # :role:`text <target>`
    (re.compile(r"`([^`<]+?)\s*(?:<[^`>]*>)?`__?"), r"\1"),  # `Name <target>`_ and `Name`_
    (re.compile(r"``(.+?)``"), r"`\1`"),  # ``literal``: code stays code
    (re.compile(r"\s*\[(?:#[^\]]*|\d+|\*)\]_"), ""),  # [#note]_, [1]_ footnote marks
    (re.compile(r"</?[a-zA-Z][a-zA-Z0-9]*(?:\s[^<>]*)?/?>(?![^`]*`)"), ""),  # tags, not in code
    (re.compile(r"\bi\.e\.,?"), "that is,"),
]


def plain(sentence: str) -> str:
    """The sentence without its source's markup: links read as their text, roles and
    footnote marks go, reStructuredText's double backticks become Markdown's code span."""
    for pattern, replacement in _MARKUP_FIXES:
        sentence = pattern.sub(replacement, sentence)
    return " ".join(sentence.replace(" ,", ",").split())


def defects(sentence: str) -> list[str]:
    """What a reader would catch in the sentence: "fragment" (cut before what it
    introduces), "voice" (a document's we/our outside a quotation), "deictic" (a document
    named only as "this RFC"), "markup"."""
    unquoted = _QUOTED.sub("", sentence)
    found = []
    words = re.findall(r"[A-Za-z0-9']+", sentence.rstrip(".!?:;,"))
    if (words and words[-1].lower() in _END_WORDS) or sentence.rstrip().endswith((":", ",", ";")):
        found.append("fragment")
    if _VOICE.search(unquoted) and not _US.search(sentence):
        found.append("voice")
    if (deictic := _DEICTIC.search(unquoted)) and not _names_itself(sentence, deictic[2]):
        found.append("deictic")
    if _MARKUP.search(sentence):
        found.append("markup")
    return found


def _names_itself(sentence: str, kind: str) -> bool:
    """'This RFC' beside 'RFC 3085' is named already."""
    return kind.isupper() and bool(re.search(rf"\b{kind}[- ]?\d", sentence))


def name_of(chunk: Chunk) -> str:
    """How a report names a chunk's document: its own identifier ("RFC 3085"), else its title
    in quotation marks."""
    identifier = str(chunk.facts.get("id", "")).strip()
    return identifier or f"“{chunk.facts.get('title') or chunk.title}”"


def label_of(chunk: Chunk) -> str:
    """A document's identifier and title together, where it has both ("EIP-4844 (Shard Blob
    Transactions)"); else whichever it has."""
    identifier = str(chunk.facts.get("id", "")).strip()
    title = str(chunk.facts.get("title") or chunk.title).strip()
    if identifier and title and identifier.casefold() not in title.casefold():
        return f"{identifier} ({title})"
    return identifier or title


def named_in(sentence: str, chunk: Chunk) -> str:
    """The sentence without markup, its document named where it says "this RFC"."""
    name = name_of(chunk)
    # Outside quotations only: a quotation keeps its document's words.
    pieces = re.split(r"(“[^”]*”)", plain(sentence))
    return "".join(
        p if p.startswith("“") else _DEICTIC.sub(lambda m: _named(m, name), p) for p in pieces
    )


def as_reported(sentence: str, chunk: Chunk) -> str:
    """A document's sentence as the report's: its document named where it says "this RFC",
    and, where it speaks as "we", quoted and attributed to it."""
    text = named_in(sentence, chunk)
    name = name_of(chunk)
    if "voice" in defects(text):  # quoted as written: its "this RFC" too
        inner = plain(sentence).strip("\"“”'‘’ ").rstrip(".")
        inner = inner.replace("“", "‘").replace("”", "’").replace('"', "’")
        text = f"{name} says: “{inner}”."
    return text


def _named(match: re.Match, name: str) -> str:
    """'this RFC' -> 'RFC 3085'; 'this proposal' of a document with no identifier -> 'the
    proposal “Its title”'."""
    if match[2] in ("section", "page", "chapter"):  # a part of the document: no name fits
        return match[0]
    if not name.startswith("“"):
        return name
    the = "The" if match[1] == "T" else "the"
    return f"{the} {match[2]} {name}"


def evidence_of(chunk: Chunk) -> str:
    """What a sentence citing the chunk may rest on: its text and its document's facts."""
    facts = facts_text(chunk.facts)
    return f"{chunk.text}\n{facts}" if facts else chunk.text
