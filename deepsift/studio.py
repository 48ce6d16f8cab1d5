"""The research graph for `langgraph dev` and LangGraph Studio (named in langgraph.json).

Studio shows the settings as the graph's configurable fields; values set for a run override the
environment (DEEPSIFT_*, deepsift.toml). Studio brings its own checkpointer.
"""

from functools import cache

from langchain_core.runnables import RunnableConfig
from langgraph.graph.state import CompiledStateGraph

from deepsift.config import Settings
from deepsift.deps import Deps
from deepsift.graph import build_graph
from deepsift.models import chat_model, get_embedder
from deepsift.store import Store


@cache
def _store(uri: str, token: str) -> Store:
    """One client per database: Milvus Lite refuses a second one on the same file."""
    return Store(Settings(milvus_uri=uri, milvus_token=token))


def graph(config: RunnableConfig | None = None) -> CompiledStateGraph:
    configurable = (config or {}).get("configurable") or {}
    settings = Settings(**{k: v for k, v in configurable.items() if k in Settings.model_fields})
    store = _store(settings.resolved_milvus_uri, settings.milvus_token)
    deps = Deps(settings, store, get_embedder(settings), chat_model(settings))
    return build_graph(deps=deps, context_schema=Settings)
