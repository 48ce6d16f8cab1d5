"""The ReAct agent of Open Deep Search (its Open Reasoning Agent, ODS-v1): the model writes a
thought and one action (search, calculate, think or finish), the action's observation comes back
as the next turn, and so on until it finishes. When it does not (out of steps, of budget, or of
well-formed replies), several chain-of-thought answers are sampled from the excerpts found and
the majority answers (self-consistency).

The protocol is plain text that stops at "Observation:" (a stop sequence), so any chat endpoint
runs it, the embedded model (which cannot call tools) included. The few-shot examples in the
prompt are the ones most similar to the question (deepsift.agents.fewshot).
"""

import operator
import re
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from contextvars import copy_context
from typing import Annotated, Literal

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command
from typing_extensions import TypedDict

from deepsift.agents import Finish, fewshot
from deepsift.agents.calculator import calculate
from deepsift.deps import Deps
from deepsift.llm.structured import strip_thinking
from deepsift.prompts import react as prompt
from deepsift.records import Chunk, Usage, usage_of
from deepsift.report.output.citations import web_remark
from deepsift.report.writing.excerpts import numbered, with_numbers
from deepsift.report.writing.short_report import report_excerpts, short_report
from deepsift.retrieval import inline
from deepsift.retrieval.ranking import ranked
from deepsift.run import budget
from deepsift.run.state import RunState, allow_state_types
from deepsift.run.steps import step
from deepsift.text.marks import mark
from deepsift.text.untrusted import one_line
from deepsift.text.words import normalize_answer

EXCERPTS_PER_SEARCH = 3
EXCERPT_CHARS = 700  # an observation stays short: the embedded model has 8k tokens a slot
MAX_INVALID = 3  # replies in a row without a valid action before the loop gives up
VOTE_TEMPERATURE = 0.7  # samples must differ for a vote to mean anything


class Action(TypedDict):
    thought: str
    action: str  # search, calculate, think, finish; "invalid" for a reply without an action
    argument: str  # an invalid reply: the reply itself
    observation: str  # what the model was shown after it
    summary: str  # the observation on one line, for the trace


class ReActState(RunState, total=False):
    max_steps: int
    examples: list[int]  # the few-shot examples chosen for the question (fewshot.EXAMPLES)
    actions: Annotated[list[Action], operator.add]
    pending: Action  # the search or calculation the last reply asked for
    invalid: int  # replies without a valid action, in a row
    numbers: dict[str, int]  # chunk id -> its excerpt number, as first shown
    searched: dict[str, list[int]]  # query (case-folded) -> the excerpt numbers it showed
    stopped: str  # why the loop ended without finish
    answered_by: str  # "react" (finish) or "self-consistency" (the vote)
    votes: dict[str, int]  # sampled answer -> how many samples gave it


def build_react(
    deps: Deps | None, checkpointer: BaseCheckpointSaver | None = None, end: Finish = "report"
) -> CompiledStateGraph:
    """reason -> search | calculate -> reason ... -> finish, or -> vote -> finish; a run for
    retrieval alone stops before its vote and report."""
    stop_before = ["vote", "finish"] if end == "retrieval" else None
    allow_state_types(checkpointer)
    graph = StateGraph(ReActState)
    graph.add_node(
        "reason",
        step("reason", reason, deps=deps),
        destinations=("reason", "search", "calculate", "vote", "finish"),
    )
    graph.add_node("search", step("search", search, deps=deps))
    graph.add_node("calculate", step("calculate", calculate_action))
    graph.add_node("vote", step("vote", vote, deps=deps))
    graph.add_node("finish", step("finish", finish, deps=deps))
    graph.add_edge(START, "reason")
    graph.add_edge("search", "reason")
    graph.add_edge("calculate", "reason")
    graph.add_edge("vote", "finish")
    graph.add_edge("finish", END)
    return graph.compile(checkpointer=checkpointer, interrupt_before=stop_before, name="react")


def reason(
    state: ReActState, deps: Deps
) -> Command[Literal["reason", "search", "calculate", "vote", "finish"]]:
    """One reply: a thought and an action. The first turn checks the sources and picks the
    examples; a turn that would pass the step limit, the budget or the invalid replies allowed
    goes to the vote instead."""
    entry = {} if "examples" in state else _entry(state, deps)
    state = {**state, **entry}
    max_steps = state.get("max_steps") or deps.settings.react_max_steps
    spent = state.get("usage") or Usage()
    stopped = ""
    if len(state.get("actions", [])) >= max_steps:
        stopped = f"{max_steps} actions taken"
    elif state.get("invalid", 0) >= MAX_INVALID:
        stopped = f"{MAX_INVALID} replies in a row had no valid action"
    elif not budget.react_step_fits(spent, state["sources_to_search"], deps.settings):
        stopped = "the run's LLM-call or token budget was reached"
    if stopped:
        return Command(goto="vote", update={**entry, "stopped": stopped})
    bound = deps.llm.bind(stop=[prompt.OBSERVATION], max_tokens=deps.settings.reasoning_tokens)
    reply = bound.invoke(_conversation(state, max_steps))
    text = strip_thinking(str(reply.content))
    update = {**entry, "usage": usage_of(reply)}
    try:
        thought, action, argument = parse_reply(text)
    except ValueError as e:
        observation = prompt.INVALID.format(why=e)
        invalid = Action(
            thought="",
            action="invalid",
            argument=text[:500],
            observation=observation,
            summary=str(e),
        )
        update |= {"actions": [invalid], "invalid": state.get("invalid", 0) + 1}
        return Command(goto="reason", update=update)
    update["invalid"] = 0
    if action == "think":
        noted = Action(
            thought=thought,
            action=action,
            argument=argument,
            observation=prompt.THOUGHT_GOES_ON,
            summary="",
        )
        return Command(goto="reason", update={**update, "actions": [noted]})
    if action == "finish":
        final = Action(
            thought=thought, action=action, argument=argument, observation="", summary=""
        )
        update |= {"actions": [final], "answer": argument, "answered_by": "react"}
        return Command(goto="finish", update=update)
    pending = Action(thought=thought, action=action, argument=argument, observation="", summary="")
    return Command(goto=action, update={**update, "pending": pending})


def _entry(state: ReActState, deps: Deps) -> dict:
    """The agents' entry (retrieval.inline.entry), and the few-shot examples for the question."""
    examples = fewshot.choose(state["question"], deps.embedder, deps.settings.react_examples)
    return {**inline.entry(state, deps), "examples": examples}


def _conversation(state: ReActState, max_steps: int) -> list[BaseMessage]:
    examples = "\n\n".join(fewshot.render(i) for i in state["examples"])
    messages: list[BaseMessage] = [
        SystemMessage(prompt.SYSTEM.format(max_steps=max_steps, examples=examples)),
        HumanMessage(prompt.USER.format(question=state["question"])),
    ]
    for done in state.get("actions", []):
        if done["action"] == "invalid":
            said = done["argument"] or "(nothing)"
        else:
            said = f"Thought: {done['thought']}\nAction: {done['action']}[{done['argument']}]"
        messages += [AIMessage(said), HumanMessage(f"{prompt.OBSERVATION} {done['observation']}")]
    return messages


def search(state: ReActState, deps: Deps) -> dict:
    """Search the query in its routed sources; the best excerpts are the observation, numbered
    for the whole run (one shown before is named by its number only). A repeated query is
    answered with the numbers it showed."""
    pending = state["pending"]
    query = " ".join(pending["argument"].split())
    searched = state.get("searched", {})
    if query.casefold() in searched:
        shown = ", ".join(map(mark, searched[query.casefold()])) or "(none)"
        observation = prompt.ALREADY_SEARCHED.format(numbers=shown)
        return {"actions": [_observed(pending, observation, "searched already")]}
    found = inline.search_routed(
        query, state.get("sources_to_search"), deps, state.get("chunks", {}), EXCERPTS_PER_SEARCH
    )
    best = found.best
    new = [chunk for chunk in best if chunk.id not in state.get("numbers", {})]
    numbers = with_numbers(state.get("numbers", {}), best)
    observation = _excerpts(best, new, numbers) or prompt.NOTHING_FOUND
    summary = "; ".join(f"{mark(numbers[c.id])} {one_line(c.title, 80)}" for c in best)
    return {
        "actions": [_observed(pending, observation, summary or "nothing found")],
        "sub_queries": [query],
        "searched": {**searched, query.casefold(): [numbers[c.id] for c in best]},
        "chunks": found.chunks,
        "numbers": numbers,
        "iteration": state.get("iteration", 0) + 1,
        "usage": found.usage,
        "notes": found.notes,
        "web_searches": found.web_searches,
    }


def _excerpts(best: list[Chunk], new: list[Chunk], numbers: dict[str, int]) -> str:
    clipped = [c.model_copy(update={"text": _clip(c.text, EXCERPT_CHARS)}) for c in new]
    again = [f"{mark(numbers[c.id])} {prompt.ALREADY_SHOWN}" for c in best if c not in new]
    return "\n\n".join(filter(None, [numbered(clipped, numbers), *again]))


def calculate_action(state: ReActState) -> dict:
    pending = state["pending"]
    result = calculate(pending["argument"])
    return {"actions": [_observed(pending, result, result)]}


def _observed(pending: Action, observation: str, summary: str) -> Action:
    return Action(**{**pending, "observation": observation, "summary": one_line(summary, 300)})


def vote(state: ReActState, deps: Deps) -> dict:
    """Self-consistency: chain-of-thought answers sampled from the excerpts found so far, as
    many as the setting asks and the budget allows; the most frequent answer wins (ties: the
    first sampled)."""
    shown = _report_excerpts(state)
    number = state.get("numbers", {})
    if not shown:  # nothing read: the question's own search
        shown = ranked(state)[:EXCERPTS_PER_SEARCH]
        number = {chunk.id: n for n, chunk in enumerate(shown, 1)}
    clipped = [c.model_copy(update={"text": _clip(c.text, EXCERPT_CHARS)}) for c in shown]
    steps = [
        f"- {done['action']}[{done['argument']}]: {done['summary']}"
        for done in state.get("actions", [])
        if done["action"] != "invalid"
    ]
    messages = [
        SystemMessage(prompt.VOTE_SYSTEM),
        HumanMessage(
            prompt.VOTE_USER.format(
                excerpts=numbered(clipped, number) or "(none found)",
                trace="\n".join(steps) or "(none)",
                question=state["question"],
            )
        ),
    ]
    room = budget.calls_left(state.get("usage"), deps.settings) - budget.structured(1)
    samples = max(1, min(deps.settings.react_votes, room))

    def sample(seed: int) -> BaseMessage:
        # A seed per sample: the samples differ, and a resumed run's kept replies stay apart.
        llm = deps.llm.bind(
            temperature=VOTE_TEMPERATURE, seed=seed, max_tokens=deps.settings.reasoning_tokens
        )
        return llm.invoke(messages)

    with ThreadPoolExecutor(max_workers=samples) as pool:
        # In this thread's context: a cancelled run's samples are not sent.
        sampling = [pool.submit(copy_context().run, sample, n) for n in range(samples)]
        replies = [reply.result() for reply in sampling]
    usage = Usage()
    answers = []
    for reply in replies:
        usage = usage + usage_of(reply)
        answers.append(_sampled_answer(strip_thinking(str(reply.content))))
    answer, votes = majority([a for a in answers if a])
    return {"answer": answer, "answered_by": "self-consistency", "votes": votes, "usage": usage}


def majority(answers: list[str]) -> tuple[str, dict[str, int]]:
    """The most frequent answer (compared normalised, as answers are scored; ties go to the
    first given) and the count of each, under the first spelling given."""
    spelled: dict[str, str] = {}
    for answer in answers:
        spelled.setdefault(normalize_answer(answer), answer)
    counts = Counter(normalize_answer(answer) for answer in answers)
    votes = {spelled[key]: count for key, count in counts.most_common()}
    return (next(iter(votes)) if votes else ""), votes


def _sampled_answer(text: str) -> str:
    """The answer a sample ends with; none where it echoed a placeholder ("<the answer>")
    instead of answering, so that an echo never wins the vote."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    answer = lines[-1].strip(" *.") if lines else ""
    for line in reversed(lines):
        if line.casefold().startswith(prompt.VOTE_ANSWER.casefold()):
            answer = line[len(prompt.VOTE_ANSWER) :].strip(" *.")
            break
    return "" if answer.startswith("<") and answer.endswith(">") else answer


def finish(state: ReActState, deps: Deps) -> dict:
    """A short report citing the excerpts the run read; a voted answer says so in its Notes."""
    remarks = web_remark(state.get("web_searches", []))
    votes = state.get("votes", {})
    if state.get("answered_by") == "self-consistency":
        remarks.append(
            prompt.SELF_CONSISTENCY.format(
                stopped=state.get("stopped", ""),
                samples=sum(votes.values()),
                votes=max(votes.values(), default=0),
            )
        )
    report, sources, usage = short_report(
        state["question"],
        state.get("answer", ""),
        _report_excerpts(state),
        state.get("notes", []),
        deps,
        remarks,
    )
    return {"report": report, "sources": sources, "usage": usage}


def _report_excerpts(state: ReActState) -> list[Chunk]:
    """The excerpts the run was shown, those its thoughts and answer cite first."""
    said = " ".join(a["thought"] for a in state.get("actions", [])) + state.get("answer", "")
    return report_excerpts(state, said)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


# The reply's text protocol, read tolerantly: small models vary the case and spacing, use
# parentheses, drop "Action:", wrap the reply in a code fence or write on after the action.
_NAMES = {
    "search": "search",
    "calculate": "calculate",
    "calculator": "calculate",
    "calc": "calculate",
    "think": "think",
    "finish": "finish",
    "final answer": "finish",
    "final_answer": "finish",
}
_LABEL = re.compile(r"^[\s*#>`]*action\s*\d*[\s*]*:[\s*]*", re.IGNORECASE | re.MULTILINE)
_CALL = re.compile(
    r"^[\s*`\"']*(?P<name>search|calculator|calculate|calc|think|finish|final[ _]answer)"
    r"\s*(?P<open>[\[(])",
    re.IGNORECASE | re.MULTILINE,
)
_BARE = re.compile(r"^[\s*`]*(?P<name>search|calculate|think|finish)\s*:?\s+(?P<arg>\S.*)$", re.I)
_FINAL = re.compile(r"^[\s*]*final answer[\s*]*:[\s*]*(?P<arg>\S.*)$", re.IGNORECASE | re.MULTILINE)
_THOUGHT = re.compile(r"^[\s*#>]*thought\s*\d*[\s*]*:[\s*]*", re.IGNORECASE | re.MULTILINE)
_OBSERVATION = re.compile(r"^[\s*]*observation\s*\d*[\s*]*:", re.IGNORECASE | re.MULTILINE)


def parse_reply(text: str) -> tuple[str, str, str]:
    """(thought, action, argument) from a reply; ValueError says what is wrong with it."""
    text = re.sub(r"```[\w-]*", "", strip_thinking(text))
    text = _OBSERVATION.split(text, maxsplit=1)[0].strip()  # an endpoint that ignored the stop
    if not text:
        raise ValueError("the reply was empty")
    label = _LABEL.search(text)
    before = text[: label.start()] if label else ""
    after = text[label.end() :] if label else text
    call = _CALL.match(after) if label else _CALL.search(after)
    if call:
        name = _NAMES[call["name"].casefold().replace("_", " ")]
        argument = _bracketed(after, call.end("open") - 1)
        thought = before if label else after[: call.start()]
    elif label and (bare := _BARE.match(after.splitlines()[0] if after else "")):
        name, argument, thought = bare["name"].casefold(), bare["arg"], before
    elif final := _FINAL.search(text):
        name, argument, thought = "finish", final["arg"], text[: final.start()]
    elif label:
        word = (after.split() or ["(nothing)"])[0]
        raise ValueError(f"unknown action {word[:40]!r}")
    else:
        raise ValueError("no line 'Action: ...'")
    argument = argument.strip().strip("\"'`").strip()
    if not argument:
        raise ValueError(f"{name}[...] was empty")
    thought = " ".join(_THOUGHT.sub("", thought).split())
    return thought, name, argument


def _bracketed(text: str, start: int) -> str:
    """The text inside the bracket at `start`, up to the one that closes it (nested ones
    counted); without one, the rest of the line."""
    opener = text[start]
    closer = "]" if opener == "[" else ")"
    depth = 0
    for i in range(start, len(text)):
        if text[i] == opener:
            depth += 1
        elif text[i] == closer:
            depth -= 1
            if depth == 0:
                return text[start + 1 : i]
    return text[start + 1 :].split("\n", 1)[0].rstrip(" .")
