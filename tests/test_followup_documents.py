"""Follow-ups about documents by what they are: the document found by identifier or by
description (and by its status), its facts answered in a sentence that names it, every part of
a two-part question answered or named as not answered, and never a header block for an answer.
A small folder of proposals with front matter, a real Milvus Lite file, the scripted endpoint."""

import pytest

from deepsift import Settings
from deepsift.deps import Deps
from deepsift.followups import questions as followup
from deepsift.followups.documents import named_documents
from deepsift.followups.questions import NOT_SAID, answer_followup
from deepsift.ingest.pipeline import ingest
from deepsift.llm.chat import chat_model
from deepsift.llm.embedders import get_embedder
from deepsift.records import Chunk, Usage
from deepsift.store import Store

from fake_openai import FakeOpenAI, last_user_text, schema_name

PROPOSALS = {
    "xep-0012.md": """---
xep: 12
title: Plain-text wire format
author: Ada Lovelace <ada@example.org>, Charles Babbage
status: Superseded
superseded-by: 31
created: 2019-03-01
---
# Plain-text wire format

## Abstract

Each message is sent as lines of plain text, one header per line, ended by an empty line.

## Specification

A line may hold at most 998 characters. Receivers reject longer lines with error 413.
""",
    "xep-0031.md": """---
xep: 31
title: Binary framing for messages
author: Grace Hopper
status: Final
replaces: 12
created: 2021-06-10
---
# Binary framing for messages

## Abstract

Messages are sent in length-prefixed binary frames instead of plain-text lines.

## Specification

Each frame opens with a four-byte length. A frame holds at most 16 KiB of payload; larger
messages are split across frames.

Frame: data
Flags: none
Padding: zero bytes
""",
    "xep-0040.md": """---
xep: 40
title: Message compression
author: Alan Turing
status: Rejected
created: 2022-01-20
---
# Message compression

## Abstract

Frames may be compressed with a dictionary shared by both ends of a connection.

## Specification

The Zephyr compressor uses a preset dictionary of 32 KiB, agreed when the connection opens.

Both ends rebuild the dictionary every 90 days. This costs about 2 ms of processor time.
""",
}


@pytest.fixture(scope="module")
def proposals(tmp_path_factory):
    """The folder ingested into the collection "proposals", and the store holding it."""
    folder = tmp_path_factory.mktemp("proposals")
    for name, text in PROPOSALS.items():
        (folder / name).write_text(text)
    settings = Settings(data_dir=tmp_path_factory.mktemp("data"))
    store = Store(settings)
    ingest([folder], "proposals", store, get_embedder(settings), settings, description="proposals")
    yield store, settings.data_dir
    store.close()


def asked(proposals, question, reply=None, known=("xep-0012.md",)):
    """The follow-up's record and the requests the endpoint saw, after a run that held the
    first chunks of the `known` proposals; the model answers `reply(request_body)`."""
    store, data_dir = proposals
    calls = []

    def model(body):
        calls.append(body)
        assert schema_name(body) == "FollowUpAnswer"
        return reply(body) if reply else {"found": False, "sentences": []}

    with FakeOpenAI(model) as server:
        settings = Settings(data_dir=data_dir, llm_base_url=server.url, llm_api_key="t")
        deps = Deps(settings, store, get_embedder(settings), chat_model(settings))
        chunks = {}
        for name in known:
            source = next(s for s in store.documents("proposals") if s.endswith(name))
            chunks |= {c.id: c for c in store.opening("proposals", source, 1)}
        values = {"chunks": chunks, "sources_to_search": ["proposals"], "sources": []}
        said, _ = answer_followup(values, question, deps)
    return said, calls


def test_a_document_named_by_description_is_found_and_its_author_named_without_a_call(proposals):
    said, calls = asked(proposals, "Who wrote the proposal for binary framing of messages?")

    assert said.text.startswith("Grace Hopper wrote XEP")
    assert "Binary framing for messages" in said.text and "[" in said.text
    assert said.sources and said.sources[0].source.endswith("xep-0031.md")
    assert calls == []


def test_a_document_picked_by_its_status_is_the_one_with_that_status(proposals):
    said, _ = asked(proposals, "Who wrote the proposal that was rejected?")

    assert said.text.startswith("Alan Turing wrote XEP")


def test_what_replaced_a_document_is_answered_from_its_facts_naming_both(proposals):
    said, calls = asked(proposals, "What replaced XEP-12?")

    assert "XEP 12 (Plain-text wire format) was replaced by XEP 31 (Binary framing" in said.text
    assert calls == []


def test_both_parts_of_a_two_part_question_are_answered_the_second_about_the_first_s_answer(
    proposals,
):
    said, _ = asked(proposals, "Which proposal superseded XEP-12, and who wrote it?")

    assert "was replaced by XEP 31" in said.text and "Grace Hopper wrote XEP 31" in said.text


def test_a_part_the_answer_leaves_out_is_named_as_not_answered(proposals):
    def first_part_only(body):
        shown = last_user_text(body)
        n = next(line for line in shown.splitlines() if "16 KiB" in line).split("]")[0][1:]
        return {
            "found": True,
            "sentences": [
                {"text": "A frame holds at most 16 KiB of payload.", "excerpts": [int(n)]}
            ],
        }

    question = "How large may a frame of XEP-31 be, and which checksum does XEP-31 use?"
    said, calls = asked(proposals, question, first_part_only)

    assert "16 KiB" in said.text
    assert "The documents do not answer “Which checksum does XEP-31 use?”" in said.text
    assert len(calls) == 1


def test_a_header_block_is_never_shown_nor_given_as_the_answer(proposals):
    def pasted(body):
        shown = last_user_text(body)
        assert "Flags: none" not in shown and "author:" not in shown.casefold()
        n = next(line for line in shown.splitlines() if "Grace Hopper" in line).split("]")[0][1:]
        fields = "title: Binary framing for messages; author: Grace Hopper; status: Final."
        return {"found": True, "sentences": [{"text": fields, "excerpts": [int(n)]}]}

    said, calls = asked(proposals, "What does XEP-31 say about padding?", pasted)

    assert said.text.startswith(NOT_SAID) and "author:" not in said.text
    assert "the facts and passages of XEP 31 (Binary framing for messages)" in said.text
    assert len(calls) == 1


def test_a_passage_of_the_named_document_the_run_never_held_is_shown(proposals, monkeypatch):
    # The new search finds nothing: the document is found by its identifier alone.
    monkeypatch.setattr(followup, "_search_again", lambda question, values, deps: ({}, [], Usage()))

    def cites_the_limit(body):
        shown = last_user_text(body)
        assert "preset dictionary of 32 KiB" in shown
        return {"found": False, "sentences": []}

    asked(proposals, "How large is the preset dictionary of XEP-40?", cites_the_limit)


def test_a_question_that_describes_no_document_is_not_answered_from_some_document_s_facts(
    proposals,
):
    said, calls = asked(proposals, "Who wrote it?")

    assert said.text.startswith(NOT_SAID) and len(calls) == 1


@pytest.mark.parametrize(
    "question, named",
    [
        ("What does XEP-40 say?", True),
        ("What does XEP 40 say?", True),
        ("What does xep40 say?", True),
        ("What does the compression XEP (40) say?", True),
        ("What happened for 40 days?", False),
        ("Which of the 40 proposals?", False),
    ],
)
def test_a_document_is_named_by_its_identifier_however_written(proposals, question, named):
    store, data_dir = proposals
    settings = Settings(data_dir=data_dir)
    deps = Deps(settings, store, get_embedder(settings), None)

    found = named_documents(question, [], deps, ["proposals"])

    assert [c.source.endswith("xep-0040.md") for c in found] == ([True] if named else [])


def test_an_answer_about_something_else_than_the_question_names_is_not_given(proposals):
    def the_frame_limit(body):
        shown = last_user_text(body)
        n = next(line for line in shown.splitlines() if "16 KiB" in line).split("]")[0][1:]
        said = "A frame holds at most 16 KiB of payload."
        return {"found": True, "sentences": [{"text": said, "excerpts": [int(n)]}]}

    said, calls = asked(
        proposals, "How large is a frame of the Zephyr compressor?", the_frame_limit
    )

    assert said.text.startswith(NOT_SAID) and len(calls) == 1


def test_a_bare_answer_answers_the_first_open_part_and_the_other_is_named(proposals):
    def a_name_only(body):
        shown = last_user_text(body)
        n = next(line for line in shown.splitlines() if "16 KiB" in line).split("]")[0][1:]
        return {"found": True, "sentences": [{"text": "At most 16 KiB.", "excerpts": [int(n)]}]}

    question = "What payload limit does XEP-31 set, and which checksum does XEP-31 use?"
    said, _ = asked(proposals, question, a_name_only)

    assert "16 KiB" in said.text and "What payload limit" not in said.text
    assert "The documents do not answer “Which checksum does XEP-31 use?”" in said.text


def test_a_document_the_question_opens_by_naming_is_the_one_it_is_asked_of(proposals):
    # The rest of the question ("a frame", "its size") is the binary framing proposal's subject.
    question = "According to the proposal on message compression, how large may a frame be?"
    said, calls = asked(proposals, question)

    assert "the facts and passages of XEP 40 (Message compression)" in said.text
    assert len(calls) == 1


def test_a_sentence_that_leans_on_the_one_before_is_shown_with_it(proposals):
    def the_cost(body):
        shown = last_user_text(body)
        assert "every 90 days. This costs about 2 ms of processor time." in shown
        return {"found": False, "sentences": []}

    asked(proposals, "What does rebuilding the XEP-40 dictionary cost?", the_cost)


def test_a_piece_of_a_sentence_that_a_chunk_boundary_cut_is_not_shown(proposals):
    store, data_dir = proposals
    settings = Settings(data_dir=data_dir)
    deps = Deps(settings, store, get_embedder(settings), None)
    # Chunks overlap: the second starts in the middle of the first one's last sentence.
    whole = "Option A is a wetland. It needs about 140 ha of land, but only 55 ha could be bought."
    cut = "140 ha of land, but only 55 ha could be bought. Its cost was EUR 17.8 million."
    chunks = [
        Chunk(id=f"n{n}", text=text, source="/notes.md", title="Notes", collection="c", position=n)
        for n, text in enumerate([whole, cut])
    ]

    shown = [text for text, _ in followup._evidence("How much land did it need?", chunks, [], deps)]

    assert any("wetland. It needs about 140 ha" in text for text in shown)
    assert not any(text.startswith("140 ha") for text in shown)


def test_a_sentence_the_facts_repeat_as_their_summary_is_still_shown_as_itself(proposals):
    """The facts' passage ends with the document's summary, its first sentence; a cited answer
    must rest on the sentence as the excerpt holds it, so that sentence stays shown alone."""

    def the_format(body):
        shown = last_user_text(body)
        sentence = "Each message is sent as lines of plain text, one header per line, ended by"
        assert f"<excerpt>{sentence} an empty line.</excerpt>" in shown
        assert ".." not in shown
        return {"found": False, "sentences": []}

    asked(proposals, "How is each message sent under XEP-12?", the_format)
