"""A scripted research model: plausible replies for each node, chosen by what the request asks."""

import re
from typing import Any

from fake_openai import last_user_text, schema_name

SUB_QUERIES = [
    "Why was Kestrel Works built",
    "Kestrel Works approved budget and final cost",
    "phosphorus levels in Lake Veldmere after Kestrel Works",
]


REWRITE_ASKED = "of your reply do not hold to the excerpts"
HEADINGS = {"German": "Ergebnisse", "French": "Résultats"}  # a section heading by language
ORDINALS = ["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth"]


class ScriptedResearcher:
    """decompose -> fixed sub-queries; route -> every listed source; reflect -> one follow-up
    query the first time for each question, then []; sections cite every excerpt shown plus a
    number never shown, and write as many words as asked, taken from the excerpts (so they pass
    the claim check), each answering its part with its first sentence (or `answer`);
    `false_figure` adds a sentence whose figure no excerpt holds, which the rewrite corrects
    (or, with `rewrite_fails`, repeats)."""

    def __init__(
        self,
        sub_queries: list[str] = SUB_QUERIES,
        follow_ups: list[str] | None = None,
        follow_up_if: str = "",
        false_figure: str = "",
        rewrite_fails: bool = False,
        answer: str = "",
        title: str = "What the evidence says",
    ):
        self.sub_queries = sub_queries
        self.follow_ups = ["River Orrin phosphorus load"] if follow_ups is None else follow_ups
        self.follow_up_if = follow_up_if  # only questions containing this get follow-ups
        self.reflections: dict[str, int] = {}  # question -> reflections asked so far
        self.false_figure = false_figure
        self.rewrite_fails = rewrite_fails
        self.title = title
        self.answer = answer  # every section's answer, when given

    def __call__(self, body: dict[str, Any]) -> Any:
        name = schema_name(body)
        text = last_user_text(body)
        if name == "SubQueries":
            return {"queries": self.sub_queries}
        if name == "Rephrasings":
            k = int(re.search(r"Write (\d+) alternative", body["messages"][0]["content"])[1])
            query = text.removeprefix("Query: ")
            return {"queries": [f"{query} (phrasing {i})" for i in range(1, k + 1)]}
        if name == "Routing":
            system = body["messages"][0]["content"]
            sources = re.findall(r"^- (\w+):", system, re.MULTILINE)
            count = len(re.findall(r"^\d+\. ", text, re.MULTILINE))
            return {"routes": [{"query": i, "sources": sources} for i in range(1, count + 1)]}
        if name == "Reflection":
            # Counted per question, so a run's replies do not depend on the runs before it.
            question = re.search(r"^Question: (.*)$", text, re.MULTILINE)[1]
            self.reflections[question] = self.reflections.get(question, 0) + 1
            first = self.reflections[question] == 1 and self.follow_up_if in question
            return {"queries": self.follow_ups if first else []}
        if name == "Answered":  # the first sentence as the answer; those asked restated
            said = re.findall(r"^\[\d+\] <excerpt>(.*)</excerpt>$", text, re.MULTILINE)
            asked = re.search(r"then restate sentences ([\d, ]+), in order", text)
            count = len(asked[1].split(",")) if asked else 0
            restated = [f"In the documents, {s[:1].lower()}{s[1:]}" for s in said[:count]]
            if self.false_figure and restated:
                restated[0] = self.false_figure
            return {"answer": self.answer or (said[0] if said else ""), "sentences": restated}
        if name == "ReportFrame":
            cited = sorted({int(n) for n in re.findall(r"\[(\d+)\]", text)})
            count = int(re.search(r"Write the title, (\d+) headings", text)[1])
            language = re.search(r"every sentence in (\w+)", text)
            heading = HEADINGS[language[1]] if language else "What the sources show"
            return {
                "title": self.title,
                "headings": [f"{heading}: {n}" for n in range(1, count + 1)],
                "conclusion": [
                    {"text": "In conclusion, the facts answer it.", "excerpts": cited[:1]}
                ],
            }
        if name == "CitedText" and REWRITE_ASKED in text:  # the claim check's rewrite
            shown = excerpts(body["messages"][1]["content"])  # the conversation's excerpts
            listed = re.findall(r"^\d+\. (.*) \([^()]*\)$", text, re.MULTILINE)
            if not shown:  # the frame's: it was shown the sections' sentences
                fixed = listed[0] if self.rewrite_fails else "It was done."
                return {"sentences": [{"text": fixed, "excerpts": []} for _ in listed]}
            n = min(shown)
            fixed = listed[0] if self.rewrite_fails else first_sentence(shown[n])
            return {"sentences": [{"text": fixed, "excerpts": [n]} for _ in listed]}
        if name == "FollowUpAnswer":  # the shown sentence sharing most of the question's words
            return follow_up_answer(text)
        if name == "ShortAnswer":
            return {"answer": "Marrowby"}
        if name == "Verdict":
            return {"correct": "Gold answer: Marrowby" in text}
        raise AssertionError(f"unexpected request: {name} {text[:200]}")


def follow_up_answer(text: str) -> dict:
    """The shown sentence that shares most (at least two) of the question's longer words, of
    those that tie the one most about them (the largest share of its own longer words), as the
    answer citing it; found false when none does."""
    question = re.search(r"^Question: (.*)$", text, re.MULTILINE)[1]
    asked = {w for w in re.findall(r"[a-z]{4,}", question.lower())}
    shown = re.findall(r"^\[(\d+)\] <excerpt>(.*)</excerpt>$", text, re.MULTILINE)
    words = [(set(re.findall(r"[a-z]{4,}", s.lower())), int(n), s) for n, s in shown]
    shared = [(len(asked & w), len(asked & w) / max(len(w), 1), n, s) for w, n, s in words]
    best = max(shared, key=lambda t: t[:2], default=(0, 0, 0, ""))
    if best[0] < 2:
        return {"found": False, "sentences": []}
    return {"found": True, "sentences": [{"text": best[3], "excerpts": [best[2]]}]}


class ScriptedSearchO1:
    """Search-o1's calls: reasoning turns ask `queries` one after another (stopping where a
    server would, at the end marker), then answer; Reason-in-Documents cites the first excerpt
    it is shown; structured calls (routing, the report) go to ScriptedResearcher. With
    `sentence`, the reasoning ends with that sentence and gives `answer` only when asked for the
    short answer."""

    def __init__(
        self,
        queries: list[str],
        answer: str = "Marrowby",
        honour_stop: bool = True,
        sentence: str = "",
    ):
        self.queries = queries
        self.answer = answer
        self.honour_stop = honour_stop
        self.sentence = sentence
        self.structured = ScriptedResearcher()

    def __call__(self, body: dict[str, Any]) -> Any:
        system = body["messages"][0]["content"]
        if system.startswith("You are a reasoning assistant"):
            asked = sum(m["role"] == "assistant" for m in body["messages"])
            if last_user_text(body).startswith("Write only 'Final answer:'"):
                return f"Final answer: {self.answer}"
            if asked >= len(self.queries):
                return f"That settles it.\nFinal answer: {self.sentence or self.answer}"
            query = self.queries[asked]
            text = f"Step {asked + 1}: I need a fact.\n<|begin_search_query|>{query}"
            if not self.honour_stop:
                text += "<|end_search_query|>\n<|begin_search_result|>imagined<|end_search_result|>"
            return text
        if system.startswith("You read search results"):
            first = re.search(r"^\[(\d+)\]", last_user_text(body), re.MULTILINE)
            return (
                f"Knowledge for this query [{first[1]}]."
                if first
                else "No helpful information found."
            )
        if system.startswith(SHORT_REPORT_SYSTEM):
            return short_report_reply(body)
        return self.structured(body)


SHORT_REPORT_SYSTEM = "You write a short research report"


def short_report_reply(body: dict[str, Any]) -> dict[str, Any]:
    """A short report's findings: the first sentence of each excerpt shown, citing it."""
    shown = excerpts(last_user_text(body))
    return {
        "sentences": [{"text": first_sentence(text), "excerpts": [n]} for n, text in shown.items()]
    }


def excerpts(text: str) -> dict[int, str]:
    """The numbered excerpts a prompt shows: n -> quoted text."""
    found = re.findall(
        r"^\[(\d+)\] [^\n]*\n<excerpt>\n(.*?)\n</excerpt>", text, re.MULTILINE | re.DOTALL
    )
    return {int(n): quoted for n, quoted in found}


def first_sentence(text: str) -> str:
    return re.split(r"(?<=[.!?])\s", " ".join(text.split()), maxsplit=1)[0]


REACT_SYSTEM = "You answer the question by thinking step by step and acting"
VOTE_SYSTEM = "You answer the question from the numbered excerpts"


class ScriptedReAct:
    """ReAct's calls: the n-th reply of a run (n counted from the request's assistant turns,
    so runs do not share a counter) is `replies[n]` (the last one repeated), a string or a
    function of the request; the sample with seed s answers `votes[s]` (in turn); the report
    cites every excerpt shown; structured calls (routing) go to ScriptedResearcher."""

    def __init__(self, replies: list[Any], votes: list[str] = ("Marrowby",)):
        self.replies = replies
        self.votes = votes
        self.structured = ScriptedResearcher()

    def __call__(self, body: dict[str, Any]) -> Any:
        system = body["messages"][0]["content"]
        if system.startswith(REACT_SYSTEM):
            asked = sum(m["role"] == "assistant" for m in body["messages"])
            reply = self.replies[min(asked, len(self.replies) - 1)]
            return reply(body) if callable(reply) else reply
        if system.startswith(VOTE_SYSTEM):
            vote = self.votes[body.get("seed", 0) % len(self.votes)]
            return f"The excerpts point to it.\nAnswer: {vote}"
        if system.startswith(SHORT_REPORT_SYSTEM):
            return short_report_reply(body)
        return self.structured(body)


def last_observation(body: dict[str, Any]) -> str:
    """What the last observation in a ReAct request says."""
    return last_user_text(body).removeprefix("Observation: ")
