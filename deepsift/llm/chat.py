"""The chat model: an OpenAI-compatible endpoint, or the embedded model when none is set."""

import httpx2
from langchain_openai import ChatOpenAI

from deepsift.config import Settings
from deepsift.llm.endpoint import CONNECT_SECONDS, WatchedClient, endpoint_slots
from deepsift.llm.local_model import LOCAL_MODEL_NAME, local_server
from deepsift.llm.replies import RunReplies


def chat_model(settings: Settings) -> ChatOpenAI:
    local = settings.uses_local_llm
    # 2 CPU cores: the embedded model takes minutes over a long report.
    seconds = max(settings.llm_timeout, 600) if local else settings.llm_timeout
    timeout = httpx2.Timeout(seconds, connect=min(seconds, CONNECT_SECONDS))
    base_url = local_server(settings).base_url if local else settings.llm_base_url or None
    slots = endpoint_slots(base_url or "openai", settings.llm_parallel)
    return ChatOpenAI(
        base_url=base_url,
        api_key="local" if local else settings.llm_api_key or "none",
        model=LOCAL_MODEL_NAME if local else settings.llm_model,
        temperature=0,
        http_client=WatchedClient(slots, timeout=timeout),
        timeout=timeout,
        max_retries=0 if local else settings.llm_retries,
        cache=RunReplies(settings.data_dir / "replies.sqlite"),
    )
