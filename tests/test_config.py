from pathlib import Path

from deepsift.config import Settings


def test_settings_come_from_env_then_toml_then_defaults(tmp_path: Path, monkeypatch):
    (tmp_path / "deepsift.toml").write_text(
        'max_iterations = 5\ntop_k = 9\nllm_model = "from-toml"\n'
    )
    monkeypatch.setenv("DEEPSIFT_TOP_K", "7")

    settings = Settings()

    assert (settings.max_iterations, settings.top_k, settings.llm_model) == (5, 7, "from-toml")
    assert settings.max_sub_queries == 4


def test_no_endpoint_and_no_key_means_the_embedded_model(monkeypatch):
    assert Settings().uses_local_llm
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")

    settings = Settings()

    assert settings.llm_api_key == "sk-test" and not settings.uses_local_llm


def test_rounds_default_to_one_on_the_embedded_model_and_three_on_an_endpoint(monkeypatch):
    assert Settings().max_iterations == 1  # its reflection gains no recall (multihop.md)
    assert Settings(llm_base_url="http://127.0.0.1:9/v1").max_iterations == 3
    monkeypatch.setenv("DEEPSIFT_MAX_ITERATIONS", "2")
    assert Settings().max_iterations == 2


def test_milvus_defaults_to_a_lite_file_in_the_data_dir_and_accepts_a_server(monkeypatch):
    monkeypatch.setenv("DEEPSIFT_DATA_DIR", "/srv/research")
    assert Settings().resolved_milvus_uri == "/srv/research/milvus.db"

    monkeypatch.setenv("DEEPSIFT_MILVUS_URI", "http://milvus:19530")
    assert Settings().resolved_milvus_uri == "http://milvus:19530"
