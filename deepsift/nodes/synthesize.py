import re
from concurrent.futures import ThreadPoolExecutor

from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel

from deepsift.citations import cited_report
from deepsift.deps import Deps
from deepsift.prompts import synthesize as prompt
from deepsift.prompts.excerpts import numbered
from deepsift.state import Chunk, ResearchState, Usage, ranked
from deepsift.structured import ask_structured

MAX_SECTIONS = 6
_WRITTEN_MARKS = re.compile(r"\s*\[\d+(?:\s*[,;]\s*\d+)*\]")


class CitedSentence(BaseModel):
    text: str
    excerpts: list[int]


class CitedText(BaseModel):
    """Prose as sentences, each carrying the excerpt numbers it rests on: even a small model
    held to this schema cites every claim, which free text does not get from it."""

    sentences: list[CitedSentence]

    def render(self, citable: set[int] | None = None) -> str:
        """Sentences with their [n] marks; numbers outside `citable` (when given) are dropped."""
        seen: set[str] = set()
        rendered = []
        for sentence in self.sentences:
            # Marks the model wrote into the text itself are not checked: only `excerpts` cite.
            text = _WRITTEN_MARKS.sub("", sentence.text).strip()
            if not text or text in seen:  # small models loop; a repeated sentence adds nothing
                continue
            seen.add(text)
            numbers = [
                n for n in dict.fromkeys(sentence.excerpts) if citable is None or n in citable
            ]
            marks = "".join(f"[{n}]" for n in numbers)
            if text[-1] in ".!?" and marks:
                text = f"{text[:-1]} {marks}{text[-1]}"
            elif marks:
                text = f"{text} {marks}"
            rendered.append(text)
        return " ".join(rendered)


def plan_sections(state: ResearchState, per_section: int) -> list[tuple[str, list[Chunk]]]:
    """One section per sub-query that found something, with its best chunks."""
    by_query: dict[str, list[Chunk]] = {}
    for chunk in ranked(state):
        by_query.setdefault(chunk.query, []).append(chunk)
    sections = [
        (query, by_query[query][:per_section])
        for query in state.get("sub_queries", [])
        if by_query.get(query)
    ]
    return sections[:MAX_SECTIONS]


def synthesize(state: ResearchState, deps: Deps) -> dict:
    """Write a section per sub-query from numbered excerpts (concurrently), then a conclusion;
    citations are resolved against the excerpts shown, never against the model's text."""
    sections = plan_sections(state, deps.settings.section_chunks)
    shown = [chunk for _, chunks in sections for chunk in chunks]
    number = {chunk.id: n for n, chunk in enumerate(shown, 1)}

    def write(system: str, user: str, citable: set[int]) -> tuple[str, Usage]:
        messages = [SystemMessage(system), HumanMessage(user)]
        reply, usage = ask_structured(
            deps.llm, messages, CitedText, max_tokens=deps.settings.section_tokens
        )
        return (reply.render(citable) if reply else "This part could not be written."), usage

    def write_section(section: tuple[str, list[Chunk]]) -> tuple[str, Usage]:
        query, chunks = section
        excerpts = numbered(chunks, number)
        user = prompt.SECTION_USER.format(
            question=state["question"], query=query, excerpts=excerpts
        )
        return write(prompt.SECTION_SYSTEM, user, {number[c.id] for c in chunks})

    # The embedded server has one slot; requests queued behind it would only time out.
    workers = 1 if deps.settings.uses_local_llm else deps.settings.llm_concurrency
    with ThreadPoolExecutor(max_workers=workers) as pool:
        written = list(pool.map(write_section, sections))
    usage = sum((u for _, u in written), Usage())
    body = [f"# {state['question']}"]
    body += [
        f"## {query}\n\n{text}" for (query, _), (text, _) in zip(sections, written, strict=True)
    ]
    if written:
        sections_text = "\n\n".join(body[1:])
        user = prompt.CONCLUSION_USER.format(question=state["question"], sections=sections_text)
        # The conclusion may cite only what the sections it read cite.
        cited = {int(n) for n in re.findall(r"\[(\d+)\]", sections_text)}
        conclusion, cost = write(prompt.CONCLUSION_SYSTEM, user, cited)
        usage = usage + cost
        body.append(f"## Conclusion\n\n{conclusion}")
    else:
        body.append("Nothing relevant was found in the searched sources.")
    report, sources = cited_report("\n\n".join(body), shown, state.get("notes", []))
    return {
        "report": report,
        "sources": sources,
        "usage": usage,
    }
