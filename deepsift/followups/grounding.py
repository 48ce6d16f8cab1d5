"""Whether an answer sentence is about what the question asks about. A small model answers a
question the passages do not answer with a near sentence about something else: the date of
another upgrade for the one asked about, a proposal's authors for "who created" a thing the
proposal mentions. So where the question names something that some of the shown passages hold
and most do not, a sentence must cite a passage (or a passage's document) that holds it."""

from deepsift.retrieval.bridge import salient_names

COMMON = 0.5  # a name held by more than this share of the shown passages tells none apart


def specific_names(question: str, passages: list[str]) -> list[str]:
    """The question's names held by at least one of `passages` and at most COMMON of them: what
    it is about, as the passages write it. A name no passage holds cannot be judged by them."""
    folded = [passage.casefold() for passage in passages]
    names = []
    for name in salient_names(question):
        held = sum(name.casefold() in passage for passage in folded)
        if 0 < held <= COMMON * len(passages):
            names.append(name)
    return names


def about_asked(cited: list[str], names: list[str]) -> bool:
    """Whether the cited passages hold one of the question's specific `names` (or it has none)."""
    return not names or any(n.casefold() in c.casefold() for c in cited for n in names)
