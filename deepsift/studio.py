"""The research graph for `langgraph dev` and LangGraph Studio (named in langgraph.json).

Studio shows the settings as the graph's configurable fields; values set for a run override the
environment (DEEPSIFT_*, deepsift.toml). Studio brings its own checkpointer.
"""

import asyncio
import threading

from langchain_core.runnables import RunnableConfig
from langgraph.graph.state import CompiledStateGraph
from pydantic import Field, create_model

from deepsift.config import Settings
from deepsift.deps import Deps
from deepsift.graph import build_graph
from deepsift.llm.chat import chat_model
from deepsift.llm.embedders import get_embedder
from deepsift.store import Store

# The settings a run may set, as Studio shows them; secrets stay in the environment.
_SECRETS = {"llm_api_key", "embedding_api_key", "tavily_api_key", "milvus_token"}
StudioSettings = create_model(
    "StudioSettings",
    **{
        name: (field.annotation, Field(field.default, description=field.description))
        for name, field in Settings.model_fields.items()
        if name not in _SECRETS
    },
)

_stores: dict[tuple[str, str], Store] = {}
_stores_lock = threading.Lock()


def _store(settings: Settings) -> Store:
    """One client per database: Milvus Lite refuses a second one on the same file."""
    key = (settings.resolved_milvus_uri, settings.milvus_token)
    with _stores_lock:
        if key not in _stores:
            _stores[key] = Store(settings)
        return _stores[key]


async def graph(config: RunnableConfig | None = None) -> CompiledStateGraph:
    # The server calls this inside its event loop, where blocking calls (opening Milvus, loading
    # models) are refused: they run in a thread.
    return await asyncio.to_thread(_build, config)


def _build(config: RunnableConfig | None) -> CompiledStateGraph:
    configurable = (config or {}).get("configurable") or {}
    settings = Settings(
        **{k: v for k, v in configurable.items() if k in StudioSettings.model_fields}
    )
    store = _store(settings)
    deps = Deps(settings, store, get_embedder(settings), chat_model(settings))
    return build_graph(deps=deps, context_schema=StudioSettings)
