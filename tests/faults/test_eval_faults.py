"""Eval under faults: corpora kept apart from the user's collections, errored rows retried,
kills at random points."""

import json

import pytest
from test_eval import write_2wiki

from deepsift.cli import main
from deepsift.config import Settings
from deepsift.deps import Deps
from deepsift.models import get_embedder
from deepsift.sources import resolve_sources
from deepsift.store import Store


def run_main(*argv: str) -> int:
    with pytest.raises(SystemExit) as exit:
        main(list(argv))
    return exit.value.code


def test_an_eval_corpus_lives_apart_from_the_users_collections(tmp_path, monkeypatch, capsys):
    data = tmp_path / "data"
    monkeypatch.setenv("DEEPSIFT_DATA_DIR", str(data))
    dataset = write_2wiki(tmp_path / "wiki.json")
    args = ["eval", "retrieval", "--dataset", str(dataset), "--agents", "naive"]

    assert run_main(*args, "--out", str(tmp_path / "out")) == 0
    capsys.readouterr()
    assert run_main("collections", "--json") == 0

    assert json.loads(capsys.readouterr().out) == []  # the user's store holds no eval corpus
    with Store(Settings(data_dir=data, milvus_uri=str(data / "eval" / "milvus.db"))) as store:
        (corpus,) = store.names()  # kept for the next eval of this dataset
    assert corpus.startswith("eval_")


def test_research_does_not_route_to_eval_corpora_an_older_deepsift_left(tmp_path):
    settings = Settings(data_dir=tmp_path / "data")
    embedder = get_embedder(settings)
    with Store(settings) as store:
        store.ensure("notes", "my notes", embedder)
        store.ensure("eval_0123456789ab", "wiki.json: 6 context paragraphs", embedder)
        deps = Deps(settings, store, embedder, llm=None)

        assert resolve_sources(deps, None) == ["notes"]
        assert resolve_sources(deps, ["eval_0123456789ab"]) == ["eval_0123456789ab"]
