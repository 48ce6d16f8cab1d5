"""deepsift: a deep-research agent over private Milvus collections, as a LangGraph state graph."""

from deepsift.api import ResearchResult, research
from deepsift.config import Settings
from deepsift.graph import build_graph

__all__ = ["ResearchResult", "Settings", "build_graph", "research"]
