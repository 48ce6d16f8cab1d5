"""Which sources a run may search: the collections, and the web when its backend is set up.

Every entry point (CLI, Python, Studio, batch, eval) goes through `resolve_sources`, which the
graphs call on their own input, so a bad source is the same one-line error everywhere.
"""

import re
from typing import TYPE_CHECKING

from deepsift.errors import UserError
from deepsift.store import StoreError
from deepsift.web import WEB, WEB_DESCRIPTION, web_missing

if TYPE_CHECKING:
    from deepsift.deps import Deps

__all__ = [
    "WEB",
    "WEB_DESCRIPTION",
    "all_sources",
    "asked_for_web",
    "available_sources",
    "resolve_sources",
]

# Evaluation corpora that `deepsift eval` built among the user's collections before they got a
# store of their own (deepsift.eval.runner.corpus_store): searched only when named.
_OLD_EVAL_CORPUS = re.compile(r"^eval_[0-9a-f]{12}$")


def _searched_by_default(names: list[str]) -> list[str]:
    return [name for name in names if not _OLD_EVAL_CORPUS.match(name)]


def all_sources(deps: "Deps") -> list[str]:
    """Every collection, and the web when it is set up."""
    return _searched_by_default(deps.store.names()) + ([WEB] if deps.web else [])


def available_sources(allowed: list[str] | None, deps: "Deps") -> dict[str, str]:
    """Name -> description of every source a run may search (`allowed`; empty: all)."""
    return {
        name: WEB_DESCRIPTION if name == WEB else deps.store.description(name)
        for name in allowed or all_sources(deps)
    }


def resolve_sources(deps: "Deps", names: list[str] | None, web: bool | None = None) -> list[str]:
    """The sources a run searches: the named ones (every collection by default), plus the web
    when its backend is set up, unless `web` forces it on or off. Fails before any LLM call when
    there is nothing (valid) to search."""
    collections = deps.store.names()
    if web is None:
        web = WEB in names if names else deps.web is not None
    if web and not deps.web:
        raise UserError(web_missing(deps.settings))
    default = _searched_by_default(collections)
    sources = [name for name in dict.fromkeys(names or default) if name != WEB]
    sources += [WEB] if web else []
    if not sources:
        raise StoreError(
            "there are no collections yet: ingest documents first "
            "(deepsift ingest PATH --collection NAME), or search the web (--web)"
        )
    for name in sources:
        if name == WEB:
            continue
        if name not in collections:
            existing = ", ".join(collections) or "none"
            raise StoreError(f"no collection named {name!r}; existing: {existing}")
        deps.store.check_embedder(name, deps.embedder)
    return sources


def asked_for_web(named: list[str] | None, web: bool | None, sources: list[str]) -> bool:
    """The run asked for the web (`--web`, or "web" named), not only has it set up: the
    question itself is then searched there, whatever routing does with the rest."""
    return WEB in sources and (web is True or WEB in (named or []))
