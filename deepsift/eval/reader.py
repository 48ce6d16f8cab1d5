"""What a reader stops at in a report's sentence, by the grader's own rules (the yardstick is
../shared/tools/reader_check.py). Never the filters that wrote the report
(deepsift.report.checks): a grade by the same rules cannot see what they miss.

May import deepsift.text only.
"""

import re

from deepsift.text.words import words

KINDS = ("fragment", "voice", "deictic", "markup")

# A sentence cannot end on these: it was cut before what it introduces ("... consensus on").
_END_WORDS = set(
    """by on of to for with from the a an and or but that as is are was were be into at than
    such including include includes whether which who whose its their this these those via per
    about between""".split()
)
_QUOTED = re.compile(r"[\"“][^\"”]*[\"”]")
_FIRST_PERSON = re.compile(r"\b(?:we|our|ours|us|my)\b", re.IGNORECASE)
_I = re.compile(r"\bI\b(?!/)")  # a capital only: "i.e." is no voice, nor "I/O"
_COUNTRY = re.compile(r"\bU\.?S\.?\b")  # "US" is a country
# A document series is named by its acronym, as identifiers are ("RFC 2052", "PEP 8"): any
# two to five capitals, never a list of the series we happen to test on.
_SERIES = r"(?-i:[A-Z]{2,5})"
_KINDS = "document|proposal|paper|report|article|section|page|specification"
# "this RFC", "this proposal": the document the text came from, unnamed ...
_DEICTIC = re.compile(rf"\b[Tt]his (?:{_SERIES}|{_KINDS})\b")
# ... unless the sentence names a document by its number ("This RFC 2052 ...").
_NAMED = re.compile(rf"\b(?:{_SERIES})[- ]?\d")
# Source markup left in the prose: reST and Markdown marks, HTML tags, links and URLs, list
# numbers and directives at a sentence's start.
_MARKUP = re.compile(
    r"``|`_|:[a-z]+:`|\[#[^\]]*\]_|\]_\B|</?[a-zA-Z][a-zA-Z0-9]*(?:\s[^>]*)?>"
    r"|\[[^\]]+\]\s*\(|https?://\S|^\(?\d{1,2}[:)]\s|^\([a-z]\)\s"
    r"|(?<![\w:]):[a-z]+:(?=[`\w])|^\.\.\s|\[#\w*\]|\*[A-Z]+:\*"
)


def defects(sentence: str) -> list[str]:
    """The kinds (of KINDS) a reader catches in `sentence`, given without its citation marks:
    "fragment" (it ends on a word that cannot end one), "voice" (we/our outside a quotation),
    "deictic" (a document named only as "this RFC"), "markup"."""
    sentence = sentence.strip(" -*\t")
    unquoted = _QUOTED.sub("", sentence)
    last = words(sentence.rstrip(".!?:;,"))
    found = []
    if (last and last[-1].casefold() in _END_WORDS) or sentence.endswith((":", ",", ";")):
        found.append("fragment")
    first_person = _FIRST_PERSON.search(unquoted) or _I.search(unquoted)
    if first_person and not _COUNTRY.search(sentence):
        found.append("voice")
    if _DEICTIC.search(unquoted) and not _NAMED.search(sentence):
        found.append("deictic")
    if _MARKUP.search(sentence):
        found.append("markup")
    return found


def repeats(sentences: list[str]) -> int:
    """Sentences of six words or more that say again what an earlier one said: 80% of the
    words of the shorter of the two are in both (the first saying is no repeat)."""
    bags = [set(w) for s in sentences if len(w := words(s.casefold())) >= 6]
    return sum(
        any(len(bag & before) >= 0.8 * min(len(bag), len(before)) for before in bags[:n])
        for n, bag in enumerate(bags)
    )
