"""A scripted research model: plausible replies for each node, chosen by what the request asks."""

import re
from typing import Any

from fake_openai import last_user_text, schema_name

SUB_QUERIES = [
    "Why was Kestrel Works built",
    "Kestrel Works approved budget and final cost",
    "phosphorus levels in Lake Veldmere after Kestrel Works",
]


class ScriptedResearcher:
    """decompose -> fixed sub-queries; route -> every listed source; reflect -> one follow-up
    query the first time for each question, then []; sections cite every excerpt shown plus a
    number never shown."""

    def __init__(
        self,
        sub_queries: list[str] = SUB_QUERIES,
        follow_ups: list[str] | None = None,
        follow_up_if: str = "",
    ):
        self.sub_queries = sub_queries
        self.follow_ups = ["River Orrin phosphorus load"] if follow_ups is None else follow_ups
        self.follow_up_if = follow_up_if  # only questions containing this get follow-ups
        self.reflections: dict[str, int] = {}  # question -> reflections asked so far

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
        if name == "CitedText" and "This section answers:" in text:
            shown = [int(n) for n in re.findall(r"^\[(\d+)\]", text, re.MULTILINE)]
            sentences = [
                {"text": f"Fact number {n} is stated here.", "excerpts": [n]} for n in shown
            ]
            return {"sentences": sentences + [{"text": "A guess.", "excerpts": [999]}]}
        if name == "CitedText":
            return {"sentences": [{"text": "In conclusion, the facts answer it.", "excerpts": [1]}]}
        if name == "ShortAnswer":
            return {"answer": "Marrowby"}
        if name == "Verdict":
            return {"correct": "Gold answer: Marrowby" in text}
        raise AssertionError(f"unexpected request: {name} {text[:200]}")


class ScriptedSearchO1:
    """Search-o1's calls: reasoning turns ask `queries` one after another (stopping where a
    server would, at the end marker), then answer; Reason-in-Documents cites the first excerpt
    it is shown; structured calls (routing, the report) go to ScriptedResearcher."""

    def __init__(self, queries: list[str], answer: str = "Marrowby", honour_stop: bool = True):
        self.queries = queries
        self.answer = answer
        self.honour_stop = honour_stop
        self.structured = ScriptedResearcher()

    def __call__(self, body: dict[str, Any]) -> Any:
        system = body["messages"][0]["content"]
        if system.startswith("You are a reasoning assistant"):
            asked = sum(m["role"] == "assistant" for m in body["messages"])
            if asked >= len(self.queries):
                return f"That settles it.\nFinal answer: {self.answer}"
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
        if system.startswith("You write a short research report"):
            shown = [int(n) for n in re.findall(r"^\[(\d+)\]", last_user_text(body), re.MULTILINE)]
            return {"sentences": [{"text": f"Finding {n}.", "excerpts": [n]} for n in shown]}
        return self.structured(body)
