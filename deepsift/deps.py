"""The resources every node shares in one graph: settings, store, embedder, chat model, and the
web source when its backend (a Tavily key, or a SearXNG address) is set up."""

from dataclasses import dataclass
from typing import TYPE_CHECKING

from langchain_core.language_models import BaseChatModel

from deepsift.config import Settings
from deepsift.llm.chat import chat_model
from deepsift.llm.embedders import Embedder, get_embedder
from deepsift.store import Store
from deepsift.web import web_configured

if TYPE_CHECKING:
    from deepsift.web.source import WebSource


@dataclass
class Deps:
    settings: Settings
    store: Store
    embedder: Embedder
    llm: BaseChatModel
    web: "WebSource | None" = None

    def __post_init__(self) -> None:
        if self.web is None and web_configured(self.settings):
            from deepsift.web.source import WebSource  # only then: it loads trafilatura

            self.web = WebSource(self.settings, self.embedder)

    @classmethod
    def from_settings(cls, settings: Settings) -> "Deps":
        return cls(settings, Store(settings), get_embedder(settings), chat_model(settings))
