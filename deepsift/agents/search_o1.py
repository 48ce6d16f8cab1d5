"""The Search-o1 agent (Li et al., 2025): the model reasons freely and, when it needs a fact,
writes a search query between markers; generation stops there, the query is searched in the
routed sources, a Reason-in-Documents call condenses what was found, the condensed knowledge goes
back into the reasoning between result markers, and the model goes on until it answers.

The reasoning is a chat: each stretch of it is an assistant turn that ends at a query, and each
search result is the next user turn, so it runs on any OpenAI-compatible chat endpoint.
"""

import operator
from typing import Annotated, Literal

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command
from typing_extensions import TypedDict

from deepsift.agents import Finish
from deepsift.deps import Deps
from deepsift.llm.structured import strip_thinking
from deepsift.prompts import search_o1 as prompt
from deepsift.records import Chunk, Usage, usage_of
from deepsift.report.output.citations import web_remark
from deepsift.report.writing.excerpts import numbered, with_numbers
from deepsift.report.writing.short_answer import short_answer
from deepsift.report.writing.short_report import report_excerpts, short_report
from deepsift.retrieval import inline
from deepsift.run import budget
from deepsift.run.state import RunState, allow_state_types
from deepsift.run.steps import step
from deepsift.text.queries import clean_queries
from deepsift.text.untrusted import as_data

EXCERPTS_PER_SEARCH = 5
SHORT_ANSWER_WORDS = 5  # a longer final line is a sentence: the short answer is asked for
SHORT_ANSWER_TOKENS = 32


class Turn(TypedDict):
    role: Literal["assistant", "user"]
    content: str


class SearchO1State(RunState, total=False):
    max_searches: int
    turns: Annotated[list[Turn], operator.add]  # the reasoning so far, after the question
    query: str  # the query the last turn stopped at
    findings: dict[str, str]  # query (case-folded) -> the knowledge condensed from its search
    numbers: dict[str, int]  # chunk id -> its excerpt number, as first shown
    answered_by: str  # "reasoning" (its final line) or "excerpts" (it found nothing)


def build_search_o1(
    deps: Deps | None, checkpointer: BaseCheckpointSaver | None = None, end: Finish = "report"
) -> CompiledStateGraph:
    """reason -> search -> reason ... -> finish (a short answer and a cited report); a run for
    retrieval alone stops before its finish."""
    stop_before = ["finish"] if end == "retrieval" else None
    allow_state_types(checkpointer)
    graph = StateGraph(SearchO1State)
    graph.add_node("reason", step("reason", reason, deps=deps), destinations=("search", "finish"))
    graph.add_node("search", step("search", search, deps=deps))
    graph.add_node("finish", step("finish", finish, deps=deps))
    graph.add_edge(START, "reason")
    graph.add_edge("search", "reason")
    graph.add_edge("finish", END)
    return graph.compile(checkpointer=checkpointer, interrupt_before=stop_before, name="search-o1")


def _conversation(state: SearchO1State, deps: Deps) -> list[BaseMessage]:
    max_searches = state.get("max_searches") or deps.settings.max_searches
    messages: list[BaseMessage] = [
        SystemMessage(prompt.REASON_SYSTEM.format(max_searches=max_searches)),
        HumanMessage(prompt.REASON_USER.format(question=state["question"])),
    ]
    for turn in state.get("turns", []):
        kind = AIMessage if turn["role"] == "assistant" else HumanMessage
        messages.append(kind(turn["content"]))
    return messages


def reason(state: SearchO1State, deps: Deps) -> Command[Literal["search", "finish"]]:
    """Generate until the model writes a search query (the stop sequence) or an answer. The
    first turn checks the run's sources, before any LLM call."""
    max_searches = state.get("max_searches") or deps.settings.max_searches
    entry = {} if state.get("turns") else inline.entry(state, deps)
    sources = entry.get("sources_to_search") or state["sources_to_search"]
    bound = deps.llm.bind(stop=[prompt.END_QUERY], max_tokens=deps.settings.reasoning_tokens)
    reply = bound.invoke(_conversation(state, deps))
    # An endpoint that ignores stop sequences goes on to imagine the results: cut them off.
    text = strip_thinking(str(reply.content)).split(prompt.END_QUERY, 1)[0].strip()
    usage = usage_of(reply)
    query = _query(text)
    turns = len(state.get("turns", []))
    spent = (state.get("usage") or Usage()) + usage
    room = budget.search_o1_search_fits(spent, sources, deps.settings)
    # Each search takes two turns; a model that keeps asking past the limit is cut off.
    out_of_room = turns >= 2 * max_searches + 2 or not room
    if query and not out_of_room:
        turn = Turn(role="assistant", content=f"{text}{prompt.END_QUERY}")
        update = {**entry, "turns": [turn], "query": query, "usage": usage}
        return Command(goto="search", update=update)
    update = {**entry, "turns": [Turn(role="assistant", content=text)], "usage": usage}
    answer = _answer(text)
    if answer:
        update["answer"] = answer
    return Command(goto="finish", update=update)


def search(state: SearchO1State, deps: Deps) -> dict:
    """Search the query in its routed sources and condense what was found (Reason-in-Documents);
    a repeated query is answered from what its first search found."""
    query = state["query"]
    findings = state.get("findings", {})
    max_searches = state.get("max_searches") or deps.settings.max_searches
    if query.casefold() in findings:
        return _result(findings[query.casefold()])
    if state.get("iteration", 0) >= max_searches:
        return {"turns": [Turn(role="user", content=prompt.LIMIT_REACHED)]}
    found = inline.search_routed(
        query, state.get("sources_to_search"), deps, state.get("chunks", {}), EXCERPTS_PER_SEARCH
    )
    best = found.best
    numbers = with_numbers(state.get("numbers", {}), best)
    condensed, cost = _read_documents(state, query, best, numbers, deps)
    return {
        **_result(condensed),
        "sub_queries": [query],
        "findings": {**findings, query.casefold(): condensed},
        "chunks": found.chunks,
        "numbers": numbers,
        "iteration": state.get("iteration", 0) + 1,
        "usage": found.usage + cost,
        "notes": found.notes,
        "web_searches": found.web_searches,
    }


def finish(state: SearchO1State, deps: Deps) -> dict:
    """The short answer and a short report citing the excerpts the reasoning read. A reasoning
    that ended without an answer is asked for one once more, one that answered with a sentence
    is asked for the short answer, and one that found nothing is answered from the excerpts the
    run gathered (`answered_by` says which)."""
    messages = _conversation(state, deps)
    answer, usage = state.get("answer", ""), Usage()
    if not answer:
        answer, usage, messages = _ask(
            messages, prompt.LIMIT_REACHED, deps.settings.reasoning_tokens, deps
        )
    if len(answer.split()) > SHORT_ANSWER_WORDS and not _nothing_found(answer):
        answer, cost, _ = _ask(messages, prompt.SHORT_ANSWER, SHORT_ANSWER_TOKENS, deps)
        usage += cost
    answered_by = "reasoning"
    if not answer or _nothing_found(answer):
        found = short_answer(state, deps)
        answer, usage, answered_by = found["answer"] or answer, usage + found["usage"], "excerpts"
    report, sources, cost = short_report(
        state["question"],
        answer,
        _report_excerpts(state),
        state.get("notes", []),
        deps,
        web_remark(state.get("web_searches", [])),
    )
    return {
        "answer": answer,
        "answered_by": answered_by,
        "report": report,
        "sources": sources,
        "usage": usage + cost,
    }


def _ask(
    messages: list[BaseMessage], request: str, max_tokens: int, deps: Deps
) -> tuple[str, Usage, list[BaseMessage]]:
    """One more turn of the reasoning: its answer, its cost and the conversation with it (the
    conversation so far is the prompt the server has cached, so the turn costs little)."""
    asked = messages + [HumanMessage(request)]
    reply = deps.llm.bind(max_tokens=max_tokens).invoke(asked)
    text = strip_thinking(str(reply.content)).strip()
    return _answer(text) or _last_line(text), usage_of(reply), asked + [AIMessage(text)]


def _nothing_found(answer: str) -> bool:
    folded = answer.casefold()
    return any(phrase in folded for phrase in prompt.NOTHING_FOUND_PHRASES)


def _result(knowledge: str) -> dict:
    """The knowledge as the next user turn, between the result markers; a marker it copied
    from a document (`<|end_search_result|>`) is removed, so it cannot end the result early."""
    found = not knowledge.startswith(prompt.NOTHING_FOUND)
    after = prompt.CONTINUE if found else prompt.CONTINUE_AFTER_NOTHING
    content = f"{prompt.BEGIN_RESULT}\n{as_data(knowledge)}\n{prompt.END_RESULT}\n\n{after}"
    return {"turns": [Turn(role="user", content=content)]}


def _read_documents(
    state: SearchO1State, query: str, chunks: list[Chunk], numbers: dict[str, int], deps: Deps
) -> tuple[str, Usage]:
    """Reason-in-Documents: only what helps, condensed, with the excerpt numbers it came from."""
    if not chunks:
        return prompt.NOTHING_FOUND, Usage()
    reasoning = "\n".join(t["content"] for t in state.get("turns", []) if t["role"] == "assistant")
    excerpts = numbered(chunks, numbers)
    messages = [
        SystemMessage(prompt.DOCUMENTS_SYSTEM),
        HumanMessage(
            prompt.DOCUMENTS_USER.format(
                question=state["question"],
                reasoning=reasoning or "(none yet)",
                query=query,
                excerpts=excerpts,
            )
        ),
    ]
    reply = deps.llm.bind(max_tokens=deps.settings.section_tokens).invoke(messages)
    text = strip_thinking(str(reply.content)).strip()
    return text or prompt.NOTHING_FOUND, usage_of(reply)


def _report_excerpts(state: SearchO1State) -> list[Chunk]:
    """The excerpts the reasoning read, those its condensed knowledge cites first."""
    return report_excerpts(state, " ".join(state.get("findings", {}).values()))


def _query(text: str) -> str:
    if prompt.BEGIN_QUERY not in text:
        return ""
    tail = text.rsplit(prompt.BEGIN_QUERY, 1)[1]
    if prompt.FINAL in tail:
        return ""
    queries = clean_queries([tail.replace(prompt.END_QUERY, "")], 1)
    return queries[0] if queries else ""


def _answer(text: str) -> str:
    if prompt.FINAL not in text:
        return ""
    answer = text.rsplit(prompt.FINAL, 1)[1].strip().splitlines()
    return answer[0].strip(" *.") if answer else ""


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""
