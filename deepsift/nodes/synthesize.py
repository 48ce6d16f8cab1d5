import re
from concurrent.futures import ThreadPoolExecutor

from langchain_core.messages import HumanMessage, SystemMessage

from deepsift import budget
from deepsift.citations import cited_report
from deepsift.cited_text import CitedText
from deepsift.deps import Deps
from deepsift.excerpts import numbered
from deepsift.prompts import synthesize as prompt
from deepsift.state import Chunk, ResearchState, Usage, ranked
from deepsift.structured import ask_structured


def plan_sections(
    state: ResearchState, per_section: int, most: int = budget.MAX_SECTIONS
) -> list[tuple[str, list[Chunk]]]:
    """A section for each sub-query whose evidence the run ranks best (`most` at most, from
    any round, so a query that reflection added competes with the first ones), in the order
    they were asked, each with its best chunks."""
    by_query: dict[str, list[Chunk]] = {}
    for chunk in ranked(state):
        by_query.setdefault(chunk.query, []).append(chunk)
    asked = [query for query in state.get("sub_queries", []) if by_query.get(query)]
    position = {query: n for n, query in enumerate(by_query)}  # of its best chunk in the ranking
    best = set(sorted(asked, key=position.get)[: min(most, budget.MAX_SECTIONS)])
    return [(query, by_query[query][:per_section]) for query in asked if query in best]


def synthesize(state: ResearchState, deps: Deps) -> dict:
    """Write a section per sub-query from numbered excerpts (concurrently), then a conclusion;
    citations are resolved against the excerpts shown, never against the model's text."""
    affordable = budget.sections_affordable(state.get("usage"), deps.settings)
    sections = plan_sections(state, deps.settings.section_chunks, affordable)
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

    with ThreadPoolExecutor(max_workers=deps.settings.llm_parallel) as pool:
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
    elif state.get("chunks") and not affordable:
        body.append("The run's LLM-call budget (max_llm_calls) was spent before the report.")
    else:
        body.append("Nothing relevant was found in the searched sources.")
    report, sources = cited_report("\n\n".join(body), shown, state.get("notes", []))
    return {
        "report": report,
        "sources": sources,
        "usage": usage,
    }
