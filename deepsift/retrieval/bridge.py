"""Bridge names for the LLM-free hop, in the spirit of multi-hop dense retrieval (Xiong et al.,
ICLR 2021): the next hop of a question usually goes through a name that the best passages so far
mention and the question does not (the film's director, the company's founder). Each such name
is searched alone and together with the question; no model call is needed. A document titled
with the name itself is the name's own page, as a hyperlink would lead to it.
"""

import re

from deepsift.records import Chunk

# Capitalised words and initials on one line, joined across the small words inside names
# ("Duke of York", "J. R. R. Tolkien"); a full stop after a word ends the name (and a sentence).
# Not across "and": cast lists ("Michael Medwin and Sid James") are two names far more often
# than a firm's ("Marks and Spencer").
_WORD = r"(?:[A-Z]\.|[A-Z][\w'’-]*)"
_NAME = re.compile(
    rf"\b{_WORD}(?:[ \t]+(?:(?:of|the|de|der|von|van|del|la|le|da|di|du|y)[ \t]+)?{_WORD})*"
)
# "Hello Love's performer" asks about "Hello Love": the possessive is not part of the name.
_POSSESSIVE = re.compile(r"['’]s?$")
# A leading article, which a name taken from text does not carry ("The Fighting Demon").
_ARTICLE = re.compile(r"^(?:the|an?) ")
# Capitalised because they start a sentence, or common words that name no one to look up ("Will"
# and "Can" open questions too, but also names: "Will Durant", "Will County").
_NOT_NAMES = set(
    "A An And Are As At After Also Although Before But By Could Did Do Does During For From Had "
    "Has Have He Her His However How If In Is It Its Many Most Of On Or She Since Some That The "
    "Their There These They This Those To Was Were What When Where Which While Who Why With Would "
    "January February March April "
    "May June July August September October November December".split()
)


def salient_names(text: str) -> list[str]:
    """Names in `text`, in order of first mention."""
    names = []
    for match in _NAME.finditer(text):
        words = _POSSESSIVE.sub("", match.group(0).strip(" .-")).split()
        while words and words[0] in _NOT_NAMES:
            words = words[1:]
        name = " ".join(words)
        if len(name) >= 3 and name not in _NOT_NAMES:
            names.append(name)
    return list(dict.fromkeys(names))


def bridge_names(question: str, chunks: list[Chunk], names_per_chunk: int) -> list[str]:
    """For each chunk, its first `names_per_chunk` names that neither the question nor the
    chunk's own title holds (that one is found already). Names of several words go first: a
    lone capitalised word is more often a nationality or a sentence's first word than someone
    to look up ("American", "Rome" against "Henry Edwards")."""
    asked = question.casefold()
    names = []
    for chunk in chunks:
        title = chunk.title.casefold()
        new = [
            name
            for name in salient_names(chunk.text)
            if name.casefold() not in asked and name.casefold() not in title
        ]
        new.sort(key=lambda name: " " not in name)  # stable: first mention within each kind
        names += new[:names_per_chunk]
    return list(dict.fromkeys(names))


ASKED_NAMES = 4  # the question's names looked up, one search each (benchmarks/multihop.md)


def asked_names(question: str) -> list[str]:
    """The names the question itself holds, the first ASKED_NAMES of them: each one's own page
    is evidence the question's own search may rank below pages that share its words ("Lysiloma
    latisiliquum" above "Lysiloma")."""
    return salient_names(question)[:ASKED_NAMES]


def bridge_queries(name: str, question: str) -> list[str]:
    """The searches for one bridge name: the name alone, which finds its own page, and the
    name with the question, which finds what the question asks of it."""
    return [name, f"{question} {name}"]


def names_itself(title: str, name: str) -> bool:
    """Whether a document titled `title` is the page of `name`: the same words, case folded,
    once a qualifier is set aside, in parentheses ("Henry Edwards (actor)" for "Henry Edwards")
    or after a comma ("Gainesville, Florida" for "Gainesville"), and a leading article, which
    names do not carry ("The Fighting Demon" for "Fighting Demon"). A title with no space is a
    file name, a name written as a slug: "3467-unsafe-pinned" is the page of UnsafePinned."""
    if not any(c.isspace() for c in title) and _slug(_FILING.sub("", title)) == _slug(name):
        return True
    return _folded(name) in {
        _folded(re.sub(r"\([^)]*\)", " ", head)) for head in (title, title.split(",")[0])
    }


def _folded(text: str) -> str:
    return _ARTICLE.sub("", " ".join(text.casefold().split()))


# A file's filing number and its separator: "3467-", "pep-0484-", "ADR_12_".
_FILING = re.compile(r"^(?:[A-Za-z]{1,5}[-_]?)?\d+[-_](?=\D)")
# Where a name written together starts a word: "UnsafePinned", "maxRetries".
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
# What a slug puts between words: "unsafe-pinned", "try_trait_v2", "repr(transparent)".
_PUNCTUATION = re.compile(r"[\W_]+")


def _slug(text: str) -> str:
    return " ".join(_PUNCTUATION.sub(" ", _CAMEL.sub(" ", text)).casefold().split())
