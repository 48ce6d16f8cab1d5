"""The ReAct agent's few-shot examples: the k most similar to the question, by embedding, and
how they read in the prompt."""

import threading

import numpy as np

from deepsift.agents.calculator import calculate
from deepsift.llm.embedders import Embedder
from deepsift.prompts.react import NOTHING_FOUND, OBSERVATION, THOUGHT_GOES_ON
from deepsift.prompts.react_examples import EXAMPLES

# The examples' vectors, per embedder model: embedding all of them costs a batch per process.
_vectors: dict[str, np.ndarray] = {}
_lock = threading.Lock()


def choose(question: str, embedder: Embedder, k: int) -> list[int]:
    """The indexes in EXAMPLES of the `k` examples whose questions are most similar to
    `question`, most similar first."""
    if k <= 0:
        return []
    asked = _unit(np.array(embedder.embed_queries([question])))[0]
    scores = _example_vectors(embedder) @ asked
    return [int(i) for i in np.argsort(-scores, kind="stable")[:k]]


def _example_vectors(embedder: Embedder) -> np.ndarray:
    key = f"{embedder.name}/{embedder.dim}"
    with _lock:
        if key not in _vectors:
            questions = [example["question"] for example in EXAMPLES]
            _vectors[key] = _unit(np.array(embedder.embed(questions)))
        return _vectors[key]


def _unit(vectors: np.ndarray) -> np.ndarray:
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True).clip(1e-12)


def render(index: int) -> str:
    """One example as the model should write it, with the observations it would get."""
    example = EXAMPLES[index]
    lines = [f"Question: {example['question']}"]
    shown = 0
    for thought, action, argument, *found in example["steps"]:
        lines += [f"Thought: {thought}", f"Action: {action}[{argument}]"]
        if action == "search":
            excerpts = []
            for title, text in found[0]:
                shown += 1
                excerpts.append(f"[{shown}] (document {title})\n<excerpt>\n{text}\n</excerpt>")
            lines.append(f"{OBSERVATION} " + ("\n".join(excerpts) or NOTHING_FOUND))
        elif action == "calculate":
            lines.append(f"{OBSERVATION} {calculate(argument)}")
        elif action == "think":
            lines.append(f"{OBSERVATION} {THOUGHT_GOES_ON}")
    return "\n".join(lines)
