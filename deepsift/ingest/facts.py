"""A document's own facts: its identifier ("RFC 2052", "EIP-4844"), title, authors, date,
status, version, the documents it names and a one-sentence summary, read from its metadata (a
`Key: value` header block, YAML or TOML front matter, a reST or Markdown field list, e-mail
headers, office core properties, PDF info). Every chunk of the document carries them, so they
change, go and are rebuilt with its chunks. A value is data: cut, flattened to one line, and
quoted wherever a model sees it."""

import re
import tomllib
from pathlib import Path

import yaml

from deepsift.ingest.document import LoadedDocument, LoadError
from deepsift.text.markup import FOOTNOTE_MARK
from deepsift.text.sentences import split_sentences

MAX_VALUE = 300  # characters of one fact; a header is not a body
MAX_LIST = 12  # authors, or documents named
HEADER_LINES = 60  # a header block or field list stands within a document's first lines
# Front matter is parsed whole, so it is bounded before and while it is: its size, how deep
# its lists and tables nest (parsers recurse), and YAML aliases (each may repeat a whole tree:
# nine levels of nine make 387 million values from 556 bytes).
MAX_FRONT_MATTER = 64_000  # characters
MAX_DEPTH = 32
MAX_ALIASES = 64
# `Key: value`, bulleted (Markdown), bold (**Key:**) or a reST field (:Key: value).
_FIELD = re.compile(
    r"^\s*(?:[-*+]\s+)?(?:\*\*|:)?(?P<key>[A-Za-z][A-Za-z0-9 _./#-]{0,29}?)(?::\*\*|\*\*:|:)"
    r"(?:\s+(?P<value>\S.*))?$"
)
_FRONT = {"---": "yaml", "+++": "toml"}
_SUMMARY_HEADINGS = re.compile(r"(?i)^(?:\d+\.?\s*)?(summary|abstract|overview|purpose|synopsis)\b")
# Which header keys give which fact (keys lower-cased, "_" and "-" read as spaces).
_KEYS = {
    "title": ("title", "subject"),
    "authors": ("author", "authors", "creator", "from", "by", "owner", "owners", "report author"),
    "date": ("created", "date", "start date", "creation date", "creationdate", "published"),
    "status": ("status", "state"),
    "version": ("version", "target version", "python version", "release", "milestone"),
    "names": (
        "requires",
        "replaces",
        "supersedes",
        "superseded by",
        "obsoletes",
        "obsoleted by",
        "updates",
        "updated by",
        "see also",
        "related",
    ),
    "summary": ("description", "abstract"),
}
# The documents a document names, by how it relates to them, kept beside "names" for the
# questions that ask which way ("what replaced it?").
_RELATIONS = {
    "replaces": ("replaces", "supersedes", "obsoletes"),
    "replaced_by": ("superseded by", "replaced by", "obsoleted by"),
}
_LAST_WORD = {"date": "date", "author": "authors", "authors": "authors", "status": "status"}
_ID_KEYS = ("reference", "ref", "identifier", "id", "document number", "document id", "doc id")
_ACRONYM = re.compile(r"^[A-Za-z]{2,5}$")
_NOT_ACRONYMS = {"date", "type", "name", "from", "ref", "id", "page", "part", "year", "by"}


def header_fields(text: str) -> dict[str, str]:
    """The `key: value` pairs a text file opens with: its front matter, else the first block
    of two or more field lines (after a title, a letterhead or a rule, if any)."""
    lines = text.replace("\r\n", "\n").split("\n")
    fence = lines[0].strip() if lines else ""
    if fence in _FRONT:
        end = next((n for n in range(1, len(lines)) if lines[n].strip() == fence), None)
        if end is not None:
            return _front_matter("\n".join(lines[1:end]), _FRONT[fence])
    fields: dict[str, str] = {}
    key = ""
    for line in lines[:HEADER_LINES]:
        match = _FIELD.match(line)
        if match and not line.startswith((" ", "\t")):
            key = match["key"].strip()
            fields.setdefault(key, (match["value"] or "").strip())
        elif key and line.startswith((" ", "\t")) and line.strip():  # a continued value
            fields[key] = f"{fields[key]} {line.strip()}".strip()
        elif len(fields) >= 2:
            break
        elif line.strip() and not line.startswith("[") and len(fields) == 1:
            fields, key = {}, ""  # one `Key: value` line in prose is a sentence, not a header
    return fields if len(fields) >= 2 else {}


def without_front_matter(text: str) -> str:
    """The text after its front matter: the front matter is the document's facts already,
    and would read as a paragraph of `key: value` in its body."""
    lines = text.replace("\r\n", "\n").split("\n")
    fence = lines[0].strip() if lines else ""
    if fence in _FRONT:
        end = next((n for n in range(1, len(lines)) if lines[n].strip() == fence), None)
        if end is not None:
            return "\n".join(lines[end + 1 :])
    return text


def declared_title(fields: dict[str, str]) -> str:
    """The title its header gives (`title:`, `subject:`), as one plain line; "" if none."""
    by_key = {_key(k): v for k, v in fields.items()}
    return next((_one_line(by_key[k]) for k in _KEYS["title"] if k in by_key), "")


def front_matter_lines(fields: dict[str, str]) -> list[str]:
    """Front matter's fields as plain `key: value` lines (no markup, one line each, cut), as
    many as a header block may hold: what its first chunk is also found by (its authors, status,
    dates, the documents it requires), though no passage quotes them."""
    lines = [f"{_one_line(k)}: {value}" for k, v in fields.items() if (value := _one_line(v))]
    return lines[:HEADER_LINES]


def _front_matter(text: str, kind: str) -> dict[str, str]:
    """The front matter's fields; LoadError when it is over a bound (the file is hostile or not
    what it seems), {} when it is not YAML or TOML (it is read as text)."""
    name = kind.upper()
    if len(text) > MAX_FRONT_MATTER:
        raise LoadError(
            f"its {name} front matter is {len(text):,} characters, over {MAX_FRONT_MATTER:,}"
        )
    if kind == "toml" and _toml_nesting(text) > MAX_DEPTH:
        raise LoadError(f"its TOML front matter nests deeper than {MAX_DEPTH} levels")
    try:
        data = yaml.load(text, _BoundedYaml) if kind == "yaml" else tomllib.loads(text)
    except (yaml.YAMLError, tomllib.TOMLDecodeError, ValueError) as e:
        if isinstance(e, LoadError):
            raise
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(k): _flat(v, MAX_DEPTH, name) for k, v in data.items() if v is not None}


class _BoundedYaml(yaml.SafeLoader):
    """The safe loader, refusing nesting past MAX_DEPTH and aliases past MAX_ALIASES."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.depth = self.aliases = 0

    def compose_node(self, parent: yaml.Node | None, index: object) -> yaml.Node:
        if self.check_event(yaml.AliasEvent):
            self.aliases += 1
            if self.aliases > MAX_ALIASES:
                raise LoadError(f"its YAML front matter has over {MAX_ALIASES} aliases")
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:
                raise LoadError(f"its YAML front matter nests deeper than {MAX_DEPTH} levels")
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1


def _toml_nesting(text: str) -> int:
    """How deep TOML's arrays and inline tables nest, outside strings and comments."""
    deepest = depth = 0
    quote = ""
    for line in text.splitlines():
        for ch in line:
            if quote:
                quote = "" if ch == quote else quote
            elif ch in "\"'":
                quote = ch
            elif ch == "#":
                break
            elif ch in "[{":
                depth += 1
                deepest = max(deepest, depth)
            elif ch in "]}":
                depth = max(depth - 1, 0)
    return deepest


def _flat(value: object, depth: int, kind: str) -> str:
    """A value as one line, read only as far as MAX_VALUE: a list or table that aliases share
    is not repeated whole."""
    if depth <= 0:  # nested by dotted keys or [a.b.c] tables, which the parser does not recurse
        raise LoadError(f"its {kind} front matter nests deeper than {MAX_DEPTH} levels")
    if isinstance(value, dict):
        items = (f"{k}: {_flat(v, depth - 1, kind)}" for k, v in value.items())
    elif isinstance(value, list | tuple):
        items = (_flat(v, depth - 1, kind) for v in value)
    else:
        return str(value)[: MAX_VALUE + 1]
    said, length = [], 0
    for item in items:
        said.append(item)
        length += len(item) + 2
        if length > MAX_VALUE:
            break
    return ", ".join(said)


def document_facts(
    fields: dict[str, str], document: LoadedDocument, path: Path, text: str = ""
) -> dict[str, object]:
    """The document's facts from its header `fields` (key -> value as written), its loaded
    blocks, its file name and, for the form of its identifier, its text."""
    by_key = {_key(k): _one_line(v) for k, v in fields.items() if _one_line(v)}
    facts: dict[str, object] = {}
    for fact, keys in _KEYS.items():
        values = [by_key[k] for k in keys if k in by_key]
        values += [v for k, v in by_key.items() if _LAST_WORD.get(k.split()[-1]) == fact]
        if not values:
            continue
        if fact in ("authors", "names"):
            listed = [item for value in values for item in _items(value, fact)]
            facts[fact] = list(dict.fromkeys(listed))[:MAX_LIST]
        else:
            facts[fact] = values[0]
    for relation, keys in _RELATIONS.items():
        if related := [item for k in keys if k in by_key for item in _items(by_key[k], "names")]:
            facts[relation] = related[:MAX_LIST]
    if "title" not in facts:
        named = by_key.get("feature name") or by_key.get("name")
        title = document.title if document.title != path.stem else ""
        if title or (named and named.casefold() not in ("n/a", "none", "-", "not applicable")):
            facts["title"] = _one_line(title or named)
    if identifier := _identifier(fields, path, text):
        facts["id"] = identifier
        acronym, joint = re.match(r"([A-Z]+)([- ]?)", identifier).groups()
        for listed in ("names", *_RELATIONS):
            named = facts.get(listed, [])
            facts[listed] = [f"{acronym}{joint}{n}" if n.isdigit() else n for n in named]
    elif reference := next((by_key[k] for k in _ID_KEYS if k in by_key), ""):
        facts["id"] = reference
    facts = {k: v for k, v in facts.items() if v}
    if "summary" not in facts and (summary := _summary(document)):
        facts["summary"] = summary
    return facts


def _key(key: str) -> str:
    return " ".join(re.sub(r"[_-]", " ", key).casefold().split())


def _one_line(value: str) -> str:
    """A header value as one plain line: links read as their text, no code or emphasis marks,
    no control characters, cut to MAX_VALUE (read no further than a few times that)."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", value[: MAX_VALUE * 4])
    text = FOOTNOTE_MARK.sub("", text)  # "`async_closure`[^rework]"
    text = re.sub(r"(?<!\w)[`*_]{1,2}(?=\S)|(?<=\S)[`*_]{1,2}(?!\w)", "", text)
    text = "".join(ch if ch.isprintable() else " " for ch in text)
    text = " ".join(text.split())
    return text if len(text) <= MAX_VALUE else text[: MAX_VALUE - 1].rstrip() + "…"


def _items(value: str, fact: str) -> list[str]:
    """A list value's items; an author without the e-mail address or handle after the name."""
    items = [v.strip() for v in re.split(r",|;|\band\b", value) if v.strip()]
    if fact == "authors":
        items = [re.sub(r"\s*(<[^>]*>|\([^)]*\))", "", item).strip() or item for item in items]
    return [item for item in items if item.casefold() not in ("n/a", "none", "-")]


def _identifier(fields: dict[str, str], path: Path, text: str) -> str:
    """'RFC 2052', 'EIP-4844', 'PEP 8': from a field named by an acronym that holds a number
    ("eip: 4844", "RFC PR: rust-lang/rfcs#2052"), else from a file named so ("eip-4844.md");
    written the way the document itself writes it, when it does."""
    for key, value in fields.items():
        said = key.split()
        acronym = said[0] if said and _ACRONYM.match(said[0]) else ""
        if not acronym or acronym.casefold() in _NOT_ACRONYMS:
            continue
        alone = re.fullmatch(r"0*(\d{1,6})", _one_line(value))  # "eip: 4844", "PEP: 8"
        # "RFC PR: [rust-lang/rfcs#2052](...)", "RFC PR #: https://.../pull/116"
        linked = re.search(r"[#/]0*(\d{1,6})\b", value)
        if alone and len(said) == 1 and len(acronym) <= 4:
            return _as_written(acronym.upper(), alone[1], text)
        if linked and acronym.isupper():
            return _as_written(acronym, linked[1], text)
    named = re.match(r"^([A-Za-z]{2,5})[-_ ]?0*(\d{1,6})$", path.stem)
    return _as_written(named[1].upper(), named[2], text) if named else ""


def _as_written(acronym: str, number: str, text: str) -> str:
    forms = re.findall(rf"\b{acronym}([- ]?)\d+\b", text)  # how it writes any of its kind
    joint = max(set(forms), key=forms.count) if forms else " "
    return f"{acronym}{joint}{number}"


def _summary(document: LoadedDocument) -> str:
    """The first sentence under its Summary or Abstract heading, else of its first paragraph
    of prose (not its header)."""
    blocks = document.blocks
    start = next(
        (
            n + 1
            for n, b in enumerate(blocks)
            if b.heading_depth is not None and _SUMMARY_HEADINGS.match(b.text)
        ),
        0,
    )
    for block in blocks[start:]:
        # A heading drawn in plain text ("----- 1. SUMMARY -----") opens no sentence.
        text = " ".join(re.sub(r"[-=_*~]{3,}", " ", _one_line(block.text)).split())
        text = re.sub(r"^(?:\d+\.?\s+)?[A-Z][A-Z ]{3,}(?=\s[A-Z][a-z])", "", text).strip()
        if block.heading_depth is None and not _FIELD.match(text):
            first = split_sentences(text)[0]
            prose = 6 <= len(re.findall(r"[A-Za-z]{2,}", first)) and len(first.split()) <= 60
            label = re.search(r"\b[A-Z][a-z]+(?: [a-z]+)?: ", first)  # "Prepared by: ..."
            whole = first[0].isupper() and first.endswith((".", "!", "?"))  # not a list's piece
            if prose and not label and whole:
                return first
    return ""


def facts_text(facts: dict[str, object]) -> str:
    """The facts as lines a model or a claim check reads: `key: "value"`, each value quoted."""
    return "\n".join(
        f"{key}: " + ", ".join(f'"{v}"' for v in (value if isinstance(value, list) else [value]))
        for key, value in facts.items()
    )
