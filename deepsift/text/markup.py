"""A source's markup turned into plain text: links read as their text, reStructuredText's roles,
footnote marks and double backticks, and HTML tags."""

import re

FOOTNOTE_MARK = re.compile(r"\[\^[^\]\s]+\]")  # "[^rework]": a Markdown footnote mark

_MARKUP_FIXES = [
    (re.compile(r"!\[[^\]]*\]\([^)]*\)"), ""),  # a Markdown image
    (re.compile(r"\[([^\]]+)\]\((?:[^()]|\([^)]*\))*\)"), r"\1"),  # [text](target)
    # [text] (https://…): a link a model or a line break spaced apart
    (re.compile(r"\[([^\]]+)\]\s+\(\s*(?:https?|ftp)://[^)\s]*\s*\)"), r"\1"),
    (FOOTNOTE_MARK, ""),
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
