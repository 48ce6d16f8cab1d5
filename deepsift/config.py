"""Settings: environment variables DEEPSIFT_*, then an optional ./deepsift.toml, then defaults."""

from pathlib import Path

from pydantic import AliasChoices, Field
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from deepsift.report_shape import Length


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="DEEPSIFT_", toml_file="deepsift.toml", extra="ignore"
    )

    data_dir: Path = Path(".deepsift")
    milvus_uri: str = Field(
        "", description="Milvus Lite path or http://host:19530; default: DATA_DIR/milvus.db"
    )
    milvus_token: str = ""

    llm_base_url: str = ""
    llm_model: str = "gpt-4o-mini"
    llm_api_key: str = Field(
        "", validation_alias=AliasChoices("DEEPSIFT_LLM_API_KEY", "OPENAI_API_KEY")
    )
    llm_timeout: float = Field(120.0, description="seconds before one LLM request is abandoned")
    local_model: str = Field(
        "qwen2.5-coder-1.5b", description="embedded model when no endpoint is set"
    )
    local_context: int = Field(8192, ge=2048, description="embedded model: tokens per slot")
    local_slots: int = Field(
        4, ge=1, description="embedded model: requests decoded together (benchmarks/slots.py)"
    )
    llm_concurrency: int = Field(4, ge=1, description="endpoint: LLM requests in flight at once")

    embedding_base_url: str = Field(
        "", description="OpenAI-compatible embeddings; empty: embedded MiniLM"
    )
    embedding_model: str = "text-embedding-3-small"
    embedding_api_key: str = ""

    max_sub_queries: int = Field(4, ge=1)
    max_iterations: int = Field(3, ge=1)
    top_k: int = Field(5, ge=1, description="chunks per (sub-query, collection) search")
    search_question: bool = Field(
        True, description="the first round also searches the question as asked"
    )
    hop_chunks: int = Field(
        2, ge=0, description="LLM-free hop: best chunks whose names are searched each round"
    )
    hop_names: int = Field(2, ge=0, description="LLM-free hop: names searched per chunk; 0: off")
    report_length: Length = Field(
        "standard", description="brief, standard or long: about 300, 1,000 or 2,500 words"
    )
    report_language: str = Field(
        "", description="the report's language, e.g. german; empty: the question's language"
    )
    section_tokens: int = Field(
        400, ge=50, description="search-o1: longest findings or Reason-in-Documents reply"
    )
    max_llm_calls: int = Field(30, ge=1, description="budget of LLM calls for one run")
    max_tokens: int = Field(
        200_000, ge=1, description="budget of prompt+completion tokens for one run"
    )

    judge_base_url: str = Field("", description="eval --judge: endpoint; empty: the LLM's")
    judge_model: str = Field("", description="eval --judge: model; empty: llm_model")
    judge_api_key: str = ""

    max_searches: int = Field(5, ge=1, description="search-o1: searches in one run at most")
    reasoning_tokens: int = Field(
        600, ge=50, description="search-o1: longest stretch of reasoning between searches"
    )

    chunk_chars: int = Field(1200, ge=200)
    chunk_overlap: int = Field(200, ge=0)

    tavily_api_key: str = Field(
        "",
        validation_alias=AliasChoices("DEEPSIFT_TAVILY_API_KEY", "TAVILY_API_KEY"),
        description="enables the `web` source",
    )
    tavily_base_url: str = Field("", description="a Tavily-compatible endpoint; empty: Tavily's")
    web_results: int = Field(5, ge=1, description="Tavily results per web query")
    web_rephrasings: int = Field(2, ge=0, description="extra phrasings searched per web sub-query")
    web_fetch_pages: int = Field(3, ge=0, description="top result pages fetched and read in full")
    web_passages: int = Field(3, ge=1, description="passages kept from each fetched page")
    web_timeout: float = Field(10.0, gt=0, description="seconds for one search or page fetch")
    web_max_page_bytes: int = Field(2_000_000, ge=10_000)
    web_cache_ttl: float = Field(86_400.0, ge=0, description="seconds a fetched page is reused")
    web_allow_private_hosts: bool = Field(
        False, description="let the fetcher reach loopback/private addresses (tests, intranets)"
    )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return init_settings, env_settings, TomlConfigSettingsSource(settings_cls)

    @property
    def uses_local_llm(self) -> bool:
        return not self.llm_base_url and not self.llm_api_key

    @property
    def llm_parallel(self) -> int:
        """LLM requests worth sending at once: the embedded model's slots, or the endpoint's
        concurrency (more would only queue, and time out)."""
        return self.local_slots if self.uses_local_llm else self.llm_concurrency

    @property
    def judge_settings(self) -> "Settings":
        """These settings with the judge's endpoint as the LLM (eval --judge)."""
        if not self.judge_base_url:
            return self
        return self.model_copy(
            update={
                "llm_base_url": self.judge_base_url,
                "llm_model": self.judge_model or self.llm_model,
                "llm_api_key": self.judge_api_key or self.llm_api_key,
            }
        )

    @property
    def question_depth(self) -> int:
        """Hits kept from the search of the question itself: as deep as one search alone."""
        return 2 * self.top_k

    @property
    def resolved_milvus_uri(self) -> str:
        return self.milvus_uri or str(self.data_dir / "milvus.db")

    @property
    def checkpoint_path(self) -> Path:
        return self.data_dir / "checkpoints.sqlite"

    @property
    def web_cache_dir(self) -> Path:
        return self.data_dir / "web-cache"
