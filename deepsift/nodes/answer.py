from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel

from deepsift.deps import Deps
from deepsift.graph.ranking import ranked
from deepsift.graph.state import ResearchState
from deepsift.llm.structured import ask_structured
from deepsift.prompts import answer as prompt
from deepsift.report.excerpts import numbered

ANSWER_CHUNKS = 8
ANSWER_TOKENS = 64


class ShortAnswer(BaseModel):
    answer: str


def answer(state: ResearchState, deps: Deps) -> dict:
    """Short-answer mode: a few words from the best chunks, for exact-match evaluation."""
    chunks = ranked(state)[:ANSWER_CHUNKS]
    excerpts = numbered(chunks, {c.id: n for n, c in enumerate(chunks, 1)})
    messages = [
        SystemMessage(prompt.SYSTEM),
        HumanMessage(prompt.USER.format(excerpts=excerpts, question=state["question"])),
    ]
    reply, usage = ask_structured(deps.llm, messages, ShortAnswer, max_tokens=ANSWER_TOKENS)
    return {"answer": reply.answer.strip() if reply else "", "usage": usage}
