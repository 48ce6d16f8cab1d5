"""Retrieval and answer metrics, defined here once.

Ranked recall@k: the fraction of a question's gold titles found among the titles of the first k
chunks of the run's ranking (all chunks the run gathered, best fused score first).
"""

from collections import Counter

from deepsift.text.words import normalize_answer


def recall_at_k(ranked_titles: list[str], gold: list[str], k: int) -> float:
    if not gold:
        return 0.0
    top = set(ranked_titles[:k])
    return sum(1 for title in set(gold) if title in top) / len(set(gold))


def all_found(ranked_titles: list[str], gold: list[str], k: int) -> bool:
    return bool(gold) and set(gold) <= set(ranked_titles[:k])


def exact_match(prediction: str, gold: str) -> float:
    return float(normalize_answer(prediction) == normalize_answer(gold))


def token_f1(prediction: str, gold: str) -> float:
    predicted = normalize_answer(prediction).split()
    expected = normalize_answer(gold).split()
    common = sum((Counter(predicted) & Counter(expected)).values())
    if not predicted or not expected or common == 0:
        return float(predicted == expected)
    precision, recall = common / len(predicted), common / len(expected)
    return 2 * precision * recall / (precision + recall)
