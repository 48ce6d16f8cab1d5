from concurrent.futures import ThreadPoolExecutor

from langchain_core.messages import HumanMessage, SystemMessage

from deepsift.citations import display_path, resolve_citations, sources_section
from deepsift.deps import Deps
from deepsift.nodes.reflect import ranked
from deepsift.prompts import synthesize as prompt
from deepsift.state import Chunk, ResearchState, Usage, usage_of
from deepsift.structured import strip_thinking

MAX_SECTIONS = 6


def plan_sections(state: ResearchState, per_section: int) -> list[tuple[str, list[Chunk]]]:
    """One section per sub-query that found something: its best chunks, numbered across the report."""
    by_query: dict[str, list[Chunk]] = {}
    for chunk in ranked(state.get("chunks", {})):
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

    def write(section: tuple[str, list[Chunk]]):
        query, chunks = section
        excerpts = "\n\n".join(
            f"[{number[c.id]}] {c.title} ({display_path(c.source)})\n{c.text}" for c in chunks
        )
        user = prompt.SECTION_USER.format(question=state["question"], query=query, excerpts=excerpts)
        return deps.llm.invoke([SystemMessage(prompt.SECTION_SYSTEM), HumanMessage(user)])

    # The embedded server has one slot; requests queued behind it would only time out.
    workers = 1 if deps.settings.uses_local_llm else deps.settings.llm_concurrency
    with ThreadPoolExecutor(max_workers=workers) as pool:
        replies = list(pool.map(write, sections))
    usage = sum((usage_of(r) for r in replies), Usage())
    texts = [strip_thinking(str(r.content)) for r in replies]
    body = [f"# {state['question']}"]
    body += [f"## {query}\n\n{text}" for (query, _), text in zip(sections, texts, strict=True)]
    if texts:
        sections_text = "\n\n".join(body[1:])
        user = prompt.CONCLUSION_USER.format(question=state["question"], sections=sections_text)
        reply = deps.llm.invoke([SystemMessage(prompt.CONCLUSION_SYSTEM), HumanMessage(user)])
        usage = usage + usage_of(reply)
        body.append(f"## Conclusion\n\n{strip_thinking(str(reply.content))}")
    else:
        body.append("Nothing relevant was found in the searched sources.")
    report, sources = resolve_citations("\n\n".join(body), shown)
    return {
        "report": f"{report}\n\n{sources_section(sources)}\n",
        "sources": sources,
        "usage": usage,
    }
