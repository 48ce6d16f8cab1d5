"""`deepsift eval --corpus DIR`: a folder of documents ingested by the real pipeline into the
evaluation store, and runs scored by the documents they rank."""

import json
import shutil
from pathlib import Path

import pytest

from deepsift.config import Settings
from deepsift.eval.reports import Fact, rubric
from deepsift.ingest.pipeline import document_hash
from deepsift.records import Chunk
from deepsift.store import Store

from conftest import CORPUS, run_cli
from fake_openai import FakeOpenAI
from scripted import ScriptedResearcher

QUESTIONS = [
    {
        "id": "f1",
        "question": "What did the study of Lake Veldmere's sediments find about internal loading?",
        "answer": "sediments release phosphorus",
        "gold_sources": ["sediment_phosphorus_study.md"],
        "kind": "single",
    },
    {
        "id": "f2",
        "question": "Which stations monitor the lake, and what did the 2025 report measure?",
        "answer": "",
        "gold_sources": ["monitoring_network.html", "monitoring_report_2025.md"],
        "kind": "bridge",
    },
]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """The sample science folder, its files named as they are: a PDF, HTML, Markdown, text."""
    return Path(shutil.copytree(CORPUS / "science", tmp_path / "science"))


@pytest.fixture
def llm():
    with FakeOpenAI(ScriptedResearcher()) as server:
        yield server


def _questions(path: Path, questions: list[dict]) -> Path:
    path.write_text("".join(json.dumps(q) + "\n" for q in questions))
    return path


def _eval(*args: str, data: Path, llm: FakeOpenAI):
    return run_cli(
        "eval", *args, data=data, DEEPSIFT_LLM_BASE_URL=llm.url, DEEPSIFT_LLM_API_KEY="k"
    )


def _rows(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


def test_a_folder_is_ingested_once_and_runs_are_scored_by_the_documents_they_rank(
    folder, llm, tmp_path
):
    dataset = _questions(tmp_path / "q.jsonl", QUESTIONS)
    data, out = tmp_path / "data", tmp_path / "out"
    args = ["retrieval", "--corpus", str(folder), "--dataset", str(dataset), "--out", str(out)]

    first = _eval(*args, "--max-iterations", "1", data=data, llm=llm)

    assert first.returncode == 0, first.stderr
    rows = _rows(out)
    assert sorted((r["agent"], r["id"]) for r in rows) == [
        ("deepsift", "f1"), ("deepsift", "f2"), ("naive", "f1"), ("naive", "f2"),
    ]  # fmt: skip
    files = {p.name for p in folder.iterdir()}
    for row in rows:
        assert (
            row["gold_sources"]
            == next(q for q in QUESTIONS if q["id"] == row["id"])["gold_sources"]
        )
        ranked = row["ranked_sources"]
        assert ranked and set(ranked) <= files and len(ranked) == len(set(ranked))
        gold = set(row["gold_sources"])
        assert row["recall@5"] == len(gold & set(ranked[:5])) / len(gold)
    naive = {r["id"]: r for r in rows if r["agent"] == "naive"}
    assert naive["f1"]["ranked_sources"][0] == "sediment_phosphorus_study.md"
    assert "By question type" in (out / "summary.md").read_text()
    assert {s["kind"] for s in json.loads((out / "summary_by_kind.json").read_text())} == {
        "single",
        "bridge",
    }

    # Again, as it is: the folder's collection is reused, nothing is run twice.
    calls = len(llm.requests)
    again = _eval(*args, "--max-iterations", "1", data=data, llm=llm)
    assert again.returncode == 0, again.stderr
    assert len(_rows(out)) == 4 and len(llm.requests) == calls

    # An edited folder is another evaluation: the same --out refuses it, a new one brings the
    # collection up to date, as a re-ingest does.
    study = folder / "sediment_phosphorus_study.md"
    study.write_text(study.read_text() + "\n\nAddendum: the cores were re-sampled in 2024.\n")
    refused = _eval(*args, "--max-iterations", "1", data=data, llm=llm)
    assert refused.returncode == 2 and "another evaluation" in refused.stderr
    moved = ["--out", str(tmp_path / "out2")]
    assert _eval(*args[:-2], *moved, "--agents", "naive", data=data, llm=llm).returncode == 0
    # The store is opened last: Milvus Lite holds it for one process at a time.
    with Store(Settings(data_dir=data, milvus_uri=str(data / "eval" / "milvus.db"))) as store:
        (collection,) = [n for n in store.names() if n.startswith("folder_")]
        stored = store.documents(collection)
    assert {Path(source).name for source in stored} == files
    assert all(Path(source).is_relative_to(folder.resolve()) for source in stored)
    assert stored[str(study.resolve())] == document_hash(study.read_bytes())


def test_a_gold_file_the_folder_lacks_and_a_folder_set_without_its_folder_are_one_line(
    folder, llm, tmp_path
):
    missing = dict(QUESTIONS[0], gold_sources=["nowhere.md"])
    dataset = _questions(tmp_path / "q.jsonl", [missing])
    given = _eval("retrieval", "--corpus", str(folder), "--dataset", str(dataset),
                  "--out", str(tmp_path / "out"), data=tmp_path / "data", llm=llm)  # fmt: skip
    assert given.returncode == 2
    assert "question f1: gold source 'nowhere.md' is not a file in" in given.stderr

    without = _eval("retrieval", "--dataset", str(_questions(tmp_path / "q2.jsonl", QUESTIONS)),
                    "--out", str(tmp_path / "out"), data=tmp_path / "data", llm=llm)  # fmt: skip
    assert without.returncode == 2 and "--corpus DIR" in without.stderr
    assert len(without.stderr.strip().splitlines()) == 1


def test_the_rubric_counts_the_facts_stated_before_the_sources():
    report = (
        "# Title\n\n## Findings\n\nThe plant cost EUR 29.3 million [1].\n\n"
        "## Sources\n\n[1] Kestrel closeout review — `review.docx`\n"
    )
    facts = [
        Fact(fact="the final cost", any_of=["29.3 million", "29,300,000"]),
        Fact(fact="named in Sources only", any_of=["closeout review"]),
        Fact(fact="case set aside", any_of=["the plant COST"]),
    ]

    assert rubric(report, facts) == pytest.approx(2 / 3, abs=1e-3)
    assert rubric(report, []) == 1.0


def test_eval_reports_researches_the_folder_and_scores_its_facts(folder, llm, tmp_path):
    questions = _questions(
        tmp_path / "r.jsonl",
        [
            {
                "id": "r1",
                "question": "Why was the Kestrel Works plant built?",
                "length": "brief",
                "facts": [
                    {"fact": "names the plant", "any_of": ["kestrel"]},
                    {"fact": "a fact no report states", "any_of": ["zz-never-written"]},
                ],
            }
        ],
    )
    out = tmp_path / "out"

    result = _eval("reports", "--corpus", str(folder), "--questions", str(questions),
                   "--out", str(out), data=tmp_path / "data", llm=llm)  # fmt: skip

    assert result.returncode == 0, result.stderr
    (row,) = [json.loads(line) for line in (out / "reports.jsonl").read_text().splitlines()]
    assert row["rubric"] == 0.5 and row["documents"] >= 1
    assert "| id | rubric | lead | reader_defects | fragment |" in result.stdout
    sources = (out / "reports" / "r1.md").read_text().split("## Sources")[1]
    assert "[1] " in sources  # cites a document of the folder


def _numbered_folder(tmp_path: Path):
    """Three numbered documents, titled by file name: one refers to another by its number."""
    from deepsift.deps import Deps
    from deepsift.ingest.pipeline import ingest
    from deepsift.llm.embedders import get_embedder

    folder = tmp_path / "rfcs"
    folder.mkdir()
    (folder / "0012-borrow-rules.md").write_text(
        "- Start Date: 2017-08-02\n\n## Summary\n\nNon-lexical borrow rules for the checker. "
        "They build on the two-phase borrows proposed in RFC 25.\n"
    )
    (folder / "0025-nested-calls.md").write_text(
        "- Start Date: 2017-06-01\n\n## Summary\n\nA borrow begins with a reservation phase "
        "and is activated later, so nested method calls compile.\n"
    )
    (folder / "0033-unrelated.md").write_text(
        "- Start Date: 2018-01-01\n\n## Summary\n\nA style guide for naming crates.\n"
    )
    settings = Settings(data_dir=tmp_path / "data")
    deps = Deps(settings, Store(settings), get_embedder(settings), None)
    ingest([folder], "rfcs", deps.store, deps.embedder, settings, description="RFCs")
    return deps


def test_a_reference_by_number_is_followed_to_the_document_filed_under_it(tmp_path):
    from deepsift.retrieval.hop import next_hop
    from deepsift.retrieval.ranking import merge_chunks, ranked, result_list

    deps = _numbered_folder(tmp_path)
    question = "What do the non-lexical borrow rules build on?"
    vector = deps.embedder.embed_queries([question])[0]
    best = deps.store.search("rfcs", question, vector, 1)
    state = {"question": question, "sources_to_search": ["rfcs"], "chunks": result_list(best, True)}

    update = next_hop(state, deps)
    deps.settings.hop_references = 0
    off = next_hop(state, deps)
    deps.store.close()

    assert Path(best[0].source).name == "0012-borrow-rules.md"
    linked = [c for c in update["chunks"].values() if c.link_rank is not None]
    assert [Path(c.source).name for c in linked] == ["0025-nested-calls.md"]
    chunks = merge_chunks(state["chunks"], update["chunks"])
    order = [Path(c.source).name for c in ranked({**state, "chunks": chunks})]
    assert order[:2] == ["0012-borrow-rules.md", "0025-nested-calls.md"]
    assert not any(c.link_rank is not None for c in off.get("chunks", {}).values())


def test_references_follow_the_folder_through_edit_and_prune(tmp_path):
    from deepsift.ingest.pipeline import ingest
    from deepsift.retrieval.hop import next_hop
    from deepsift.retrieval.ranking import result_list

    deps = _numbered_folder(tmp_path)
    folder, question = tmp_path / "rfcs", "What do the non-lexical borrow rules build on?"

    def followed() -> list[str]:
        vector = deps.embedder.embed_queries([question])[0]
        best = result_list(deps.store.search("rfcs", question, vector, 1), of_question=True)
        state = {"question": question, "sources_to_search": ["rfcs"], "chunks": best}
        chunks = next_hop(state, deps).get("chunks", {}).values()
        return sorted(Path(c.source).name for c in chunks if c.link_rank is not None)

    before = followed()
    (folder / "0012-borrow-rules.md").write_text(
        "- Start Date: 2017-08-02\n\n## Summary\n\nNon-lexical borrow rules for the checker. "
        "They build on the naming rules of RFC 33.\n"
    )
    ingest([folder], "rfcs", deps.store, deps.embedder, deps.settings, prune=True)
    edited = followed()
    (folder / "0033-unrelated.md").unlink()
    ingest([folder], "rfcs", deps.store, deps.embedder, deps.settings, prune=True)
    pruned = followed()
    deps.store.close()

    assert before == ["0025-nested-calls.md"]
    assert edited == ["0033-unrelated.md"] and pruned == []


def test_a_reference_the_question_s_own_search_does_not_find_is_not_followed(tmp_path, monkeypatch):
    import deepsift.retrieval.hop as hop
    from deepsift.ingest.pipeline import ingest
    from deepsift.retrieval.ranking import result_list

    deps = _numbered_folder(tmp_path)
    (tmp_path / "rfcs" / "0012-borrow-rules.md").write_text(
        "- Start Date: 2017-08-02\n\n## Summary\n\nNon-lexical borrow rules for the checker. "
        "They build on the two-phase borrows of RFC 25 and name crates as RFC 33 says.\n"
    )
    ingest([tmp_path / "rfcs"], "rfcs", deps.store, deps.embedder, deps.settings, prune=True)
    question = "What do the non-lexical borrow rules build on?"

    def followed() -> list[str]:
        vector = deps.embedder.embed_queries([question])[0]
        best = result_list(deps.store.search("rfcs", question, vector, 1), of_question=True)
        state = {"question": question, "sources_to_search": ["rfcs"], "chunks": best}
        chunks = hop.next_hop(state, deps).get("chunks", {}).values()
        return sorted(Path(c.source).name for c in chunks if c.link_rank is not None)

    monkeypatch.setattr(hop, "SUPPORT_CHUNKS", 0)  # every reference followed
    every = followed()
    monkeypatch.setattr(hop, "SUPPORT_CHUNKS", 2)  # the question's two best chunks
    supported = followed()
    deps.store.close()

    assert every == ["0025-nested-calls.md", "0033-unrelated.md"]
    assert supported == ["0025-nested-calls.md"]


def test_a_rare_name_without_a_page_is_followed_and_a_common_one_is_not(tmp_path, monkeypatch):
    import deepsift.retrieval.hop as hop
    from deepsift.ingest.pipeline import ingest

    deps = _numbered_folder(tmp_path)
    for name in ("0025-nested-calls.md", "0033-unrelated.md"):
        path = tmp_path / "rfcs" / name
        path.write_text(path.read_text() + "Reviewed by the Lang Team.\n")
    path = tmp_path / "rfcs" / "0025-nested-calls.md"
    path.write_text(path.read_text() + "Written by Niko Matsakis.\n")
    ingest([tmp_path / "rfcs"], "rfcs", deps.store, deps.embedder, deps.settings, prune=True)
    monkeypatch.setattr(hop, "RARE_NAME_DOCUMENTS", 1)
    hits = deps.store.search("rfcs", "borrow", deps.embedder.embed_queries(["borrow"])[0], 1)
    top = [hits[0].model_copy(update={"text": "Lang Team and Niko Matsakis agreed."})]

    found = hop.follow_names("What do the rules build on?", top, ["rfcs"], deps, {})
    deps.store.close()

    # No document is titled with either name; Niko Matsakis is named in one document, the Lang
    # Team in two: only the first is followed, and its hits count half in the fusion.
    assert found and {c.query for c in found.values()} <= {
        "Niko Matsakis",
        "What do the rules build on? Niko Matsakis",
    }
    assert max(c.fused for c in found.values()) <= 2 * hop.UNPAGED_WEIGHT / 61  # both lists


def test_a_name_the_question_holds_leads_to_the_file_named_by_its_slug(tmp_path):
    from deepsift.retrieval.hop import follow_names
    from deepsift.retrieval.ranking import result_list

    deps = _numbered_folder(tmp_path)
    question = "Why do NestedCalls compile now?"
    vector = deps.embedder.embed_queries(["borrow rules"])[0]
    lead = result_list(deps.store.search("rfcs", "borrow rules", vector, 1), of_question=True)
    found = follow_names(question, [], ["rfcs"], deps, lead, asked=True)
    deps.store.close()

    linked = {Path(c.source).name for c in found.values() if c.link_rank is not None}
    assert linked == {"0025-nested-calls.md"}
    assert Path(next(iter(lead.values())).source).name == "0012-borrow-rules.md"


def test_a_file_name_is_a_name_written_as_a_slug():
    from deepsift.retrieval.bridge import names_itself

    assert names_itself("3467-unsafe-pinned", "UnsafePinned")
    assert names_itself("1758-repr-transparent", "#[repr(transparent)]")
    assert names_itself("pep-0484-type-hints", "Type Hints")
    assert names_itself("3058-try-trait-v2", "try_trait_v2")
    assert not names_itself("3453-f16-and-f128", "f16")
    assert not names_itself("1984 Summer Olympics", "Summer Olympics")  # a year, not a filing


def test_names_no_document_is_titled_with_add_nothing_to_a_folder_s_ranking(tmp_path):
    from deepsift.retrieval.hop import follow_names
    from deepsift.retrieval.ranking import result_list

    deps = _numbered_folder(tmp_path)
    question = "What do the rules build on?"
    hits = deps.store.search("rfcs", "borrow", deps.embedder.embed_queries(["borrow"])[0], 1)
    top = [hits[0].model_copy(update={"text": "Tree Borrows and Style Guide are named here."})]

    dropped = follow_names(question, top, ["rfcs"], deps, result_list(hits, True))
    kept = follow_names(question, top, ["rfcs"], deps, {}, names_lead=True)
    deps.store.close()

    assert dropped == {} and kept  # no name here has a page; where names do, their hits count


def test_references_and_the_files_they_name():
    from deepsift.retrieval.references import filed_under, referenced_numbers

    text = "It builds on RFC 2025 and RFC #1859, see PEP-484; in 2018 Rust 1.0 was old."
    assert referenced_numbers(text, "What did RFC 1859 propose?") == ["2025", "484"]
    assert filed_under("/x/2025-nested-method-calls.md") == "2025"
    assert filed_under("pep-0484.rst") == "484" and filed_under("ADR-0012 use postgres.md") == "12"
    assert filed_under("incident_report_IR-2024-031.txt") is None
    assert filed_under("dev_public_400.json#Apollo 11") is None


def test_numbers_a_sub_query_made_up_are_struck_and_an_empty_one_dropped():
    from deepsift.text.queries import without_invented_numbers

    queries = ["rfc 2014", "rfc 7540 extended let bindings", "the 2024 edition", "if let"]
    assert without_invented_numbers(queries, "Which RFC changed if let in the 2024 edition?") == [
        "rfc extended let bindings",
        "the 2024 edition",
        "if let",
    ]


def test_sub_queries_that_striking_made_alike_are_searched_once(tmp_path, sample_store):
    from deepsift.deps import Deps
    from deepsift.llm.chat import chat_model
    from deepsift.llm.embedders import get_embedder
    from deepsift.nodes.decompose import decompose

    planned = [
        "rfc 3771 demoted tier 1 target",
        "rfc 2837 demoted tier 1 target",
        "the tier each moved to",
    ]
    with FakeOpenAI(lambda body: {"queries": planned}) as server:
        settings = Settings(data_dir=tmp_path, llm_base_url=server.url, llm_api_key="t")
        deps = Deps(settings, sample_store, get_embedder(settings), chat_model(settings))
        update = decompose({"question": "Which RFCs demoted a Tier 1 target?"}, deps)

    assert update["pending"] == ["rfc demoted tier 1 target", "the tier each moved to"]


def test_the_question_s_search_ranks_as_many_documents_as_one_search(tmp_path):
    from deepsift.retrieval.ranking import first_documents
    from deepsift.retrieval.search import search_source

    deps = _numbered_folder(tmp_path)
    found = search_source("borrow", "rfcs", deps, 2, of_question=True)["chunks"]
    deps.store.close()

    assert len({c.source for c in found.values()}) == 2
    a, b, c = (Chunk(id=i, text=i, source=s, title=s, collection="c") for i, s in
               (("a1", "A"), ("b1", "B"), ("c1", "C")))  # fmt: skip
    a2 = a.model_copy(update={"id": "a2"})
    assert [x.id for x in first_documents([a, b, a2, c], 2)] == ["a1", "b1", "a2"]
