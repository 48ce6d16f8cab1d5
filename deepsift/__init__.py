"""deepsift: a deep-research agent over private Milvus collections, as a LangGraph state graph."""

from typing import TYPE_CHECKING

__all__ = ["ResearchResult", "Settings", "build_graph", "research"]

if TYPE_CHECKING:
    from deepsift.api import ResearchResult, research
    from deepsift.config import Settings
    from deepsift.graph import build_graph

_HOMES = {
    "ResearchResult": "deepsift.api",
    "research": "deepsift.api",
    "Settings": "deepsift.config",
    "build_graph": "deepsift.graph",
}


def __getattr__(name: str):
    """Import on first use, so `deepsift --help` does not load LangGraph and Milvus."""
    if name not in _HOMES:
        raise AttributeError(f"module 'deepsift' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(_HOMES[name]), name)
