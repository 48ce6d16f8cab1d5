"""The question's parts, read from its wording without a model: the things it asks one after
another ("why was it built, how much did it cost ..., and did it reduce ...") or lists ("a report
on X: A, B, C and D"). Each part gets its own evidence and section, a key finding and a sentence
of the conclusion (deepsift.report.evidence.sentences, deepsift.report.compose)."""

import re

from deepsift.report.checks.claims import names
from deepsift.text.sentences import split_sentences
from deepsift.text.terms import terms
from deepsift.text.words import words

# "Write a report on", "Give an overview of" ...: asks for the report, names no part.
_ASKING = re.compile(
    r"^(?:please\s+)?(?:write|give|prepare|produce|draft|compile|provide)\s+(?:me\s+)?"
    r"(?:a|an)\s+(?:[\w-]+\s+){0,3}?(?:report|summary|overview|review|analysis|account)\s+"
    r"(?:on|of|about|into|covering)\s+",
    re.IGNORECASE,
)
# Words a list item opens with that belong to the list, not to the item.
_OPENING = re.compile(
    r"^(?:(?:and|or|but|also|then|from|through|to|via|as well as|including|plus)\s+"
    r"|(?:[\w-]+\s+){0,4}?(?:such as|like|namely|covering|including)\s+)+",
    re.IGNORECASE,
)
# After " and ", these open a new question or a new named thing ("... and how did it respond",
# "the coroutines RFC and the pinning API"); "purpose and cadence" stays one part.
_NEW_AFTER_AND = re.compile(
    r"\s+and\s+(?=(?:why|how|what|which|who|when|where|whether|did|does|do|is|are|was|were|"
    r"has|have|can|could|will|would|the|its|their|his|her)\b)",
    re.IGNORECASE,
)
# An item that is one question ("how its gas cost and the associated rebate changed") is cut
# only before a new question.
_QUESTION = re.compile(r"(?i)^(?:why|how|what|which|who|when|where|whether)\b")
_NEW_QUESTION_AFTER_AND = re.compile(
    r"\s+and\s+(?=(?:why|how|what|which|who|when|where|whether|did|does|do|is|are|was|were|"
    r"has|have|can|could|will|would)\b)",
    re.IGNORECASE,
)
# An item that goes on a list of words inside the item before ("validators join, leave and
# hold balances", "proposals to discourage, neuter or deactivate it"): one word, then "and"/"or".
_GOES_ON = re.compile(r"^[a-z][\w-]*\s+(?:and|or)\s+")
# Words that tie what follows to the words before ("the cost of state creation and state
# access"): an " and " after them joins two of their objects, not two parts.
_TIES = re.compile(r"(?i)\b(?:of|to|for|in|on|with|about|by|from)\s")
# "... across its versions 64 through 71: for each version, what was added ...": the list says
# what to tell of each member of the range, and the members are the parts.
_FOR_EACH = re.compile(r"(?i)^for (?:each|every)\s")
_NUMBERS = re.compile(r"\b(\d+)\s*(?:through|to|until|-|–)\s*(\d+)\b")
_RANGE_MEMBERS = 10
_PRONOUN = re.compile(r"(?i)\b(?:it|its|they|them|their)\b")
_POSSESSIVE = re.compile(r"['’]s\b")
_HOW_SAID = re.compile(r"(?i)(?:ed|ly)$|^(?:across|through|via|ever)$")  # verbs, adverbs, ways
_RANGE = re.compile(r"\b((?:19|20)\d\d)\s*(?:through|to|until|-|–)\s*((?:19|20)\d\d)\b")
_RANGE_YEARS = 6  # a longer range is a period, not a list of years to cover one by one
# A comparison's sides are searched each: one document often holds each side's figure.
_COMPARED = re.compile(
    r"\s+(?:compared (?:with|to)|in comparison (?:with|to)|versus|vs\.?|relative to)\s+",
    re.IGNORECASE,
)
# A part that lists what it asks of ("changes (keywords, reserved syntax, preludes)", "the 2021
# and 2024 Edition RFCs"): each listed thing has its own document to answer from.
_LISTED = re.compile(r"\s*\(([^()]+,[^()]+)\)")
_LIST_SEPARATOR = re.compile(r"\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+")
_PAIRED = re.compile(r"(?<![Bb]etween )\b(\d{2,5}) and (\d{2,5})\b")  # not a range
# An item that sets something aside ("Besides Kestrel Works, what ..."): no part of its own.
_ASIDE = re.compile(r"(?i)(?:besides|apart from|except|other than|aside from)\s")
# A sentence with these, past the first, says how to treat every part ("For each step, say ...").
_FOR_EVERY = re.compile(r"\b(?:each|every|all of them|both)\b", re.IGNORECASE)
# So does one past the first that opens with an instruction ("Give concrete figures where ...").
_INSTRUCTS = re.compile(
    r"^(?:please\s+)?(?:give|cover|include|name|say|state|use|list|mention|cite|quote|keep|"
    r"focus|mark|note|explain)\b",
    re.IGNORECASE,
)


def question_parts(question: str) -> list[str]:
    """The parts the question's wording asks, in order; [] when it asks one thing (a caller
    then takes the decomposition's sub-queries)."""
    parts: list[str] = []
    sentences = [s for s in split_sentences(" ".join(question.split())) if s.strip()]
    for n, sentence in enumerate(sentences):
        if n and (_FOR_EVERY.search(sentence) or _INSTRUCTS.match(sentence)):
            continue
        asked = _ASKING.match(sentence)
        text = sentence[asked.end() :] if asked else sentence
        head, colon, listed = text.partition(": ")
        items = _joined(_items(listed if colon else text))
        if colon and _FOR_EACH.match(items[0]):
            parts += _members(head)
            continue
        if asked and not colon and len(items) > 2:
            items = items[1:]  # "a report on how X works, covering A, B and C": X is the subject
        parts += [
            part
            for n, item in enumerate(items)
            if not _ASIDE.match(item)
            for part in _split_item(item, last_of_list=len(items) > 2 and n == len(items) - 1)
        ]
    parts = [_clean(p) for p in parts]
    parts = list(dict.fromkeys(p for p in parts if len(p.split()) >= 1 and len(p) > 2))
    return parts if len(parts) > 1 else []


def part_queries(part: str) -> list[str]:
    """What is searched for a part: the part, each side of a comparison it makes, and each
    thing it lists (part_items)."""
    sides = [s.strip() for s in _COMPARED.split(part) if len(s.split()) >= 2]
    return list(dict.fromkeys([part, *(sides if len(sides) > 1 else []), *part_items(part)]))


def part_items(part: str) -> list[str]:
    """The part once for each thing it lists, so that each is searched, and answered from a
    document of its own: "Which changes (keywords, preludes) were tied to editions" gives
    "keywords: Which changes were tied to editions" and "preludes: …"; "How the 2021 and 2024
    Edition RFCs changed it" gives "How the 2021 Edition RFCs changed it" and "… 2024 …";
    [] for a part that lists nothing."""
    if listed := _LISTED.search(part):
        rest = f"{part[: listed.start()]}{part[listed.end() :]}".strip()
        things = [t for t in _LIST_SEPARATOR.split(listed[1].strip()) if t]
        return [f"{thing}: {rest}" for thing in things] if len(things) > 1 else []
    if paired := _PAIRED.search(part):
        return [f"{part[: paired.start()]}{n}{part[paired.end() :]}" for n in paired.groups()]
    return []


def part_searches(part: str, question: str) -> list[str]:
    """What a part is searched with: each of its queries with the question's names (with_names),
    and bare where names were added. The names draw the subject's chunks to a part that says
    "it"; a part that names its own thing ("the pinning API") they would pull toward documents
    about the subject at large."""
    queries = part_queries(part)
    searched = [*(with_names(q, question) for q in queries), *queries]
    about = subject(question)
    if _PRONOUN.search(part) and about:
        searched.append(f"{part}: {about}")  # "its renaming": the self-destruct opcode's
    # "the first throughput increase" in a report on blob capacity asks of blobs: the part
    # with the things the subject names that it lacks (its names are with_names'), not how
    # the subject says it ("specified", "tightly").
    have = terms(part) | terms(" ".join(names(question)))
    lacked = [
        w
        for w in words(_POSSESSIVE.sub("", about))
        if (t := terms(w)) and not t & have and not _HOW_SAID.search(w)
    ]
    if lacked:
        searched.append(f"{part} {' '.join(dict.fromkeys(lacked))}")
    return list(dict.fromkeys(searched))


def subject(question: str) -> str:
    """What a question that lists its parts is about: its first sentence before the colon,
    without the request ("Write a report on"); "" when it lists none."""
    first = split_sentences(" ".join(question.split()))[0]
    head, colon, _ = first.partition(": ")
    asked = _ASKING.match(head)
    return (head[asked.end() :] if asked else head) if colon else ""


def with_names(query: str, question: str) -> str:
    """`query` with the question's names that it lacks: a small model's sub-query often says
    "it" for the question's subject ("How much did it cost?"), and would draw no chunk about
    that subject. Each query gets those it lacks, so they favour none of the queries."""
    said = set(names(query))
    # Each sentence of the question on its own, so its first word ("For each step, ...") is no name.
    asked = [n for sentence in split_sentences(question) for n in names(sentence)]
    return " ".join([query, *dict.fromkeys(n for n in asked if n not in said)])


def _items(text: str) -> list[str]:
    """`text` cut at its commas and semicolons outside brackets, quotes and code."""
    items, depth, start, quoted = [], 0, 0, False
    for i, ch in enumerate(text):
        if ch == "`":
            quoted = not quoted
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth = max(0, depth - 1)
        elif ch in ",;" and not depth and not quoted:
            items.append(text[start:i])
            start = i + 1
    items.append(text[start:])
    return [item.strip() for item in items if item.strip()]


def _members(text: str) -> list[str]:
    """`text` (to its first comma) once for each number of the range it holds, the noun before
    the range made singular ("its versions 64 through 66": "its version 64", ...); [] without
    a short range."""
    text = text.split(", ")[0]
    found = _NUMBERS.search(text)
    if not found or not 0 < int(found[2]) - int(found[1]) <= _RANGE_MEMBERS:
        return []
    before = re.sub(r"(\w{3,})s\s*$", r"\1 ", text[: found.start()])
    return [f"{before}{n}{text[found.end() :]}" for n in range(int(found[1]), int(found[2]) + 1)]


def _joined(items: list[str]) -> list[str]:
    """`items` with each that goes on the list inside the one before (_GOES_ON) joined to it."""
    joined: list[str] = []
    for item in items:
        if joined and _GOES_ON.match(item):
            joined[-1] = f"{joined[-1]}, {item}"
        else:
            joined.append(item)
    return joined


def _split_item(item: str, last_of_list: bool) -> list[str]:
    """One list item as parts: at an " and " that opens a new thing, or the last item of a
    list of three or more ("A, B and C") at its last " and "; a range of years as one part a
    year; "from A through B" as A and B."""
    pieces = (_NEW_QUESTION_AFTER_AND if _QUESTION.match(item) else _NEW_AFTER_AND).split(item)
    if len(pieces) == 1 and last_of_list and " and " in item and "," not in item:
        before = item.rsplit(" and ", 1)[0]
        if not _TIES.search(before):
            pieces = item.rsplit(" and ", 1)
    if len(pieces) == 1 and re.match(r"(?i)from\s", item) and " through " in item:
        pieces = item.split(" through ", 1)
    parts = []
    for piece in pieces:
        years = _RANGE.search(piece)
        first, last = (int(years[1]), int(years[2])) if years else (0, 0)
        if years and 0 < last - first <= _RANGE_YEARS:
            parts += [
                piece[: years.start()] + str(y) + piece[years.end() :]
                for y in range(first, last + 1)
            ]
        else:
            parts.append(piece)
    return parts


def _clean(part: str) -> str:
    part = _OPENING.sub("", part.strip()).strip(" .?!:;,")
    return part[:1].upper() + part[1:] if part else part
