"""Routing: which sources each query is searched in, by the sources' descriptions (the model
asked only where embedding similarity leaves the choice open)."""

from typing import Any

import numpy as np
from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel

from deepsift.deps import Deps
from deepsift.errors import UserError
from deepsift.llm.embedders import similarities
from deepsift.llm.structured import ask_structured
from deepsift.prompts import route as prompt
from deepsift.records import Route, Usage


class QueryRoute(BaseModel):
    query: int
    sources: list[str]


class Routing(BaseModel):
    routes: list[QueryRoute]


# How far the best source's description must lead the next, in similarity to the query, for the
# query to be routed there without the model: the embedder's cuts.clear_lead. For MiniLM,
# benchmarks/routing.py, 70 queries over 4 sources: at 0.05, 66% go without the model and 93% of
# those where the model sends them; at 0.1, 41% and 93%; at 0.15, 26% and 100%. At 0.05 the demo
# saved its 2 routing calls but its report cited 4 documents instead of 6
# (benchmarks/latency.py --embedded): 0.15 keeps the model's routing wherever it could differ.


def plan_routes(
    queries: list[str], sources: dict[str, str], deps: Deps
) -> tuple[list[Route], Usage]:
    """The sources for each query: the one whose description clearly matches it best by
    embedding similarity; otherwise the model picks from the descriptions (every source when
    there is only one, or when the model picks none that exists)."""
    usage = Usage()
    chosen = {i: list(sources) for i in range(1, len(queries) + 1)}
    if len(sources) > 1:
        chosen |= clear_routes(queries, sources, deps)
        unclear = [i for i, names in chosen.items() if len(names) > 1]
        if unclear:
            picked, usage = model_routes([queries[i - 1] for i in unclear], sources, deps)
            chosen |= {unclear[n - 1]: names for n, names in picked.items()}
    return [Route(query=q, sources=chosen[i]) for i, q in enumerate(queries, 1)], usage


def clear_routes(queries: list[str], sources: dict[str, str], deps: Deps) -> dict[int, list[str]]:
    """Queries (numbered from 1) whose best-matching source clearly leads the next."""
    names = list(sources)
    described = [f"{name}: {sources[name]}" for name in names]
    similarity = similarities(deps.embedder, queries, described)
    clear = {}
    for i, row in enumerate(similarity, 1):
        best, lead = best_lead(row)
        if lead >= deps.embedder.cuts.clear_lead:
            clear[i] = [names[best]]
    return clear


def best_lead(similarity: np.ndarray) -> tuple[int, float]:
    """The index of the most similar source, and how far it leads the next."""
    second, best = np.argsort(similarity)[-2:]
    return int(best), float(similarity[best] - similarity[second])


def model_routes(
    queries: list[str], sources: dict[str, str], deps: Deps
) -> tuple[dict[int, list[str]], Usage]:
    """The sources the model picks for each query (numbered from 1), from their descriptions;
    a query it gives none that exists for is left out."""
    listing = "\n".join(f"- {name}: {text or '(no description)'}" for name, text in sources.items())
    numbered = "\n".join(f"{i}. {q}" for i, q in enumerate(queries, 1))
    messages = [
        SystemMessage(prompt.SYSTEM.format(sources=listing)),
        HumanMessage(prompt.USER.format(queries=numbered)),
    ]
    reply, usage = ask_structured(deps.llm, messages, Routing)
    picked = {}
    for item in reply.routes if reply else []:
        names = [name for name in dict.fromkeys(item.sources) if name in sources]
        if 1 <= item.query <= len(queries) and names:
            picked[item.query] = names
    return picked, usage


def edited_plan(answer: Any, sources: dict[str, str]) -> list[Route]:
    """The plan a reviewer sent back: [{"query", "sources"}, ...]; no sources means all."""
    if not isinstance(answer, list) or not answer:
        raise UserError("a reviewed plan must be a non-empty list of {query, sources}")
    routes = []
    for n, item in enumerate(answer, 1):
        item = item.model_dump() if isinstance(item, Route) else item
        query = str(item.get("query", "")).strip() if isinstance(item, dict) else ""
        if not query:
            raise UserError(f"reviewed plan item {n} has no query")
        picked = list(dict.fromkeys(item.get("sources") or sources))
        unknown = [name for name in picked if name not in sources]
        if unknown:
            raise UserError(
                f"reviewed plan item {n}: no source named {', '.join(unknown)}; "
                f"choose from {', '.join(sources)}"
            )
        routes.append(Route(query=query, sources=picked))
    return routes
