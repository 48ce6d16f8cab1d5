"""The resources every node shares in one graph: settings, store, embedder and chat model."""

from dataclasses import dataclass

from langchain_core.language_models import BaseChatModel

from deepsift.config import Settings
from deepsift.models import Embedder, chat_model, get_embedder
from deepsift.store import Store


@dataclass
class Deps:
    settings: Settings
    store: Store
    embedder: Embedder
    llm: BaseChatModel

    @classmethod
    def from_settings(cls, settings: Settings) -> "Deps":
        return cls(settings, Store(settings), get_embedder(settings), chat_model(settings))
