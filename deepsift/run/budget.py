"""The budget of one run, in LLM calls and tokens (max_llm_calls, max_tokens).

A step starts only when the calls that must come after it still fit. Calls are counted at their
worst: a structured call may be retried once (structured.ATTEMPTS), so it counts that many.
"""

from deepsift.config import Settings
from deepsift.llm.structured import ATTEMPTS
from deepsift.records import Usage
from deepsift.retrieval.sources import WEB

# A research round keeps room for a section per sub-query, this many at most, then the
# report's frame (title, headings, conclusion) and one rewrite of what the claim check fails;
# the report writes more sections and further rewrites only where calls are left.
MAX_SECTIONS = 6
FINISHING = 2  # the frame and one rewrite


def structured(calls: int) -> int:
    """The worst cost of `calls` structured calls."""
    return calls * ATTEMPTS


def calls_left(usage: Usage | None, settings: Settings) -> int:
    return settings.max_llm_calls - (usage.llm_calls if usage else 0)


def fits(usage: Usage | None, ahead: int, settings: Settings) -> bool:
    """True when `ahead` more calls stay within the call budget and tokens are left."""
    tokens = usage.prompt_tokens + usage.completion_tokens if usage else 0
    return ahead <= calls_left(usage, settings) and tokens < settings.max_tokens


def search_calls(queries: int, sources: list[str], settings: Settings) -> int:
    """Searching `queries` queries: routing them (a model call when there is a choice of
    sources), and rephrasing each for the web."""
    routing = 1 if len(sources) > 1 else 0
    rephrasing = queries if WEB in sources and settings.web_rephrasings else 0
    return structured(routing + rephrasing)


def report_calls(sub_queries: int) -> int:
    """The report: a section per sub-query (MAX_SECTIONS at most), then its frame and
    headings."""
    return structured(min(sub_queries, MAX_SECTIONS) + FINISHING)


def sections_affordable(usage: Usage | None, settings: Settings) -> int:
    """How many sections the report can still write, keeping room for its frame and
    headings."""
    return max(0, calls_left(usage, settings) // ATTEMPTS - FINISHING)


def round_fits(
    usage: Usage | None, searched: int, new_queries: int, sources: list[str], settings: Settings
) -> bool:
    """Whether one more research round (a reflection, then searching up to `new_queries`
    queries) still leaves room for the report after it."""
    ahead = (
        structured(1)
        + search_calls(new_queries, sources, settings)
        + report_calls(searched + new_queries)
    )
    return fits(usage, ahead, settings)


# Finishing: the answer when the reasoning gave none, the short answer when it gave a sentence,
# the answer from the excerpts when it found nothing; the report.
SEARCH_O1_FINISH = 1 + 1 + structured(1) + structured(1)


def search_o1_search_fits(usage: Usage | None, sources: list[str], settings: Settings) -> bool:
    """Whether Search-o1 can search once more (route and rephrase, Reason-in-Documents, one
    more stretch of reasoning) and still finish."""
    ahead = search_calls(1, sources, settings) + 1 + 1 + SEARCH_O1_FINISH
    return fits(usage, ahead, settings)


def react_step_fits(usage: Usage | None, sources: list[str], settings: Settings) -> bool:
    """Whether ReAct can take one more action (a reply, and for a search its routing and
    rephrasing) and still finish as it would without one: the vote's samples, the report."""
    ahead = 1 + search_calls(1, sources, settings) + settings.react_votes + structured(1)
    return fits(usage, ahead, settings)
