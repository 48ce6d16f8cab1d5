"""The short answer: a few words from the run's best chunks (the graph's answer mode, Search-o1
when its reasoning gave none, exact-match evaluation)."""

from collections.abc import Mapping
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel

from deepsift.deps import Deps
from deepsift.llm.structured import ask_structured
from deepsift.prompts import answer as prompt
from deepsift.report.writing.excerpts import numbered
from deepsift.retrieval.ranking import ranked

ANSWER_CHUNKS = 8
ANSWER_TOKENS = 64


class ShortAnswer(BaseModel):
    answer: str


def short_answer(state: Mapping[str, Any], deps: Deps) -> dict:
    """Short-answer mode: a few words from the run's best chunks, for exact-match evaluation,
    as a state update."""
    chunks = ranked(state)[:ANSWER_CHUNKS]
    excerpts = numbered(chunks, {c.id: n for n, c in enumerate(chunks, 1)})
    messages = [
        SystemMessage(prompt.SYSTEM),
        HumanMessage(prompt.USER.format(excerpts=excerpts, question=state["question"])),
    ]
    reply, usage = ask_structured(deps.llm, messages, ShortAnswer, max_tokens=ANSWER_TOKENS)
    return {"answer": reply.answer.strip() if reply else "", "usage": usage}
