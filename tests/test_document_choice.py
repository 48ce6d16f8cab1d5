"""Each part answered from the documents that answer it: which documents a part is given
(deepsift.report.evidence.choice, with the real embedder), and what the report then cites and
opens each section with (the scripted endpoint)."""

import re

import pytest
from test_report import run

from deepsift import Settings
from deepsift.llm.embedders import get_embedder
from deepsift.records import Chunk
from deepsift.report.evidence.choice import choose_documents
from deepsift.report.question.parts import part_queries

from scripted import ScriptedResearcher


def _chunk(source: str, text: str, date: str, title: str) -> Chunk:
    facts = {"id": source.removesuffix(".md").upper(), "title": title, "date": date}
    return Chunk(id=source, text=text, source=source, title=title, collection="c", facts=facts)


BLOBS = [  # each raises the blobs a block carries; the later ones rank first by their words
    _chunk(
        "eip-9003.md",
        "A blob throughput increase raises the target and maximum blobs per block to 14 and 21.",
        "2026-03-01",
        "Blob throughput increase to 14 and 21",
    ),
    _chunk(
        "eip-9002.md",
        "This blob throughput increase raises the target and maximum blobs per block to 10 and 15.",
        "2025-06-01",
        "Blob throughput increase to 10 and 15",
    ),
    _chunk(
        "eip-9001.md",
        "This blob throughput increase raises the target and maximum blobs per block to 6 and 9.",
        "2024-04-17",
        "Blob throughput increase to 6 and 9",
    ),
    _chunk(
        "eip-5000.md",
        "Validators publish their withdrawal credentials in a new registry contract.",
        "2023-01-01",
        "Withdrawal credential registry",
    ),
]


@pytest.fixture(scope="module")
def embedder():
    return get_embedder(Settings())


@pytest.mark.parametrize(
    ("part", "expected"),
    [("The first blob throughput increase", "eip-9001.md"), ("The latest one", "eip-9003.md")],
)
def test_the_first_or_the_latest_is_told_by_the_documents_dates(embedder, part, expected):
    """Among the documents that stand near the top for a part, "the first" takes the earliest
    by its date and "the latest" the latest, whatever their words' nearness ranks first."""
    parts = ["Blob throughput increases", part]
    queries = [[p, "blob throughput increase"] for p in parts]

    chosen = choose_documents(parts, queries, BLOBS, embedder)

    assert chosen[1][0] == ("c", expected)


def test_a_document_that_answers_no_part_is_not_chosen(embedder):
    parts = ["The first blob throughput increase", "How many blobs a block may carry"]

    chosen = choose_documents(parts, [[p] for p in parts], BLOBS, embedder)

    assert all(("c", "eip-5000.md") not in documents for documents in chosen)
    assert all(documents for documents in chosen)


EDITIONS = [  # two documents on editions at large, and one for each kind of change listed
    _chunk(
        "rfc-9001.md",
        "Editions are opt-in: each crate declares its edition, and editions change the language "
        "through new keywords, reserved syntax and new preludes.",
        "2017-06-01",
        "Editions",
    ),
    _chunk(
        "rfc-9002.md",
        "The edition plan lists the changes tied to the next edition: keywords, syntax, preludes.",
        "2020-02-01",
        "The next edition",
    ),
    _chunk(
        "rfc-9003.md",
        "The prelude of the new edition adds the TryFrom and TryInto traits.",
        "2021-01-01",
        "Prelude changes",
    ),
    _chunk(
        "rfc-9004.md",
        "Identifiers followed by a hash or a quote are reserved as prefixes for future syntax.",
        "2021-03-01",
        "Reserved prefixes",
    ),
]


def test_each_thing_a_part_lists_is_answered_from_a_document_of_its_own(embedder):
    parts = [
        "How editions were planned",
        "Which changes (reserved syntax, preludes) came with them",
    ]
    queries = [part_queries(p) for p in parts]

    chosen = choose_documents(parts, queries, EDITIONS, embedder)

    assert {("c", "rfc-9003.md"), ("c", "rfc-9004.md")} <= set(chosen[1])


def test_a_year_or_a_number_joined_to_a_word_is_read_as_its_own_term(embedder):
    consts = [
        _chunk(
            "rfc-9011.md",
            "Const evaluation can execute more code: undefined behaviour in it is defined.",
            "2020-10-10",
            "const_ub",
        ),
        _chunk(
            "rfc-9012.md",
            "Enable if and match during const evaluation and make them evaluate lazily.",
            "2018-01-11",
            "const-control-flow",
        ),
    ]
    parts = ["The early-2018 RFCs that extended what const evaluation can execute"]

    chosen = choose_documents(parts, [parts], consts, embedder)

    assert chosen[0][0] == ("c", "rfc-9012.md")


def test_a_document_that_answers_no_part_is_not_cited(tmp_path, sample_store):
    """The run gathers the monitoring network's staff page for the question's subject, but no
    part asks about it: no sentence cites it and the Documents table does not list it."""
    gathered: set[str] = set()

    def keep(_, update: dict) -> None:
        gathered.update(c.source.rsplit("/", 1)[-1] for c in update.get("chunks", {}).values())

    result, _ = run(tmp_path, sample_store, on_update=keep)

    cited = {s.source.rsplit("/", 1)[-1] for s in result.sources}
    assert "monitoring_network.html" in gathered
    assert "monitoring_network.html" not in cited
    assert cited and cited < gathered


ANSWER = "The final out-turn cost of Kestrel Works is EUR 29.3 million."


def test_a_parts_answer_leads_as_its_key_finding_and_its_section_goes_on_from_it(
    tmp_path, sample_store
):
    """The model's answer to the part, held to the excerpts, is said first, once: as the
    part's key finding, not again in its section."""
    result, _ = run(tmp_path, sample_store, ScriptedResearcher(answer=ANSWER))

    findings = result.report.split("## Key findings\n\n")[1].split("\n\n")[0].splitlines()
    assert any(f.startswith(f"- {ANSWER.removesuffix('.')} [") for f in findings)
    assert result.report.count(ANSWER.removesuffix(".")) == 1


def test_an_answer_whose_figure_no_excerpt_holds_is_not_given(tmp_path, sample_store):
    """An answer stating a cost no excerpt states is left out (and noted); the part's
    strongest evidence sentence leads instead."""
    false = "The final out-turn cost of Kestrel Works is EUR 99.9 million."
    result, _ = run(tmp_path, sample_store, ScriptedResearcher(answer=false))

    findings = result.report.split("## Key findings\n\n")[1].split("\n\n")[0].splitlines()
    assert findings and "99.9" not in result.report
    assert all(re.match(r"- [^\[]+\[\d+\]\.$", f) for f in findings)  # cited sentences
    assert "do not state their figures or names" in result.report.split("## Notes")[1]


def test_an_answer_that_restates_the_question_is_not_given(tmp_path, sample_store):
    """A small model asked for one part's answer often restates the whole question; that
    answers no part, so the part's strongest sentence leads instead, and the Notes say why."""
    restated = (
        "The documents cover why the Kestrel Works treatment plant was built, how much it cost "
        "in the end compared with its approved budget, and whether it reduced phosphorus levels "
        "in Lake Veldmere."
    )
    asked = (
        "Why was the Kestrel Works treatment plant built, how much did it cost in the end "
        "compared with its approved budget, and did it reduce phosphorus levels in Lake Veldmere?"
    )
    researcher = ScriptedResearcher(answer=restated)
    result, _ = run(tmp_path, sample_store, researcher, question=asked)

    assert "The documents cover why" not in result.report
    assert "restates the question" in result.report.split("## Notes")[1]
