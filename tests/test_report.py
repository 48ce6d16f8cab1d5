"""The report: its structure, length, language and claim check, on the scripted endpoint."""

import re

import pytest

from deepsift import Settings, research
from deepsift.api import CitedSource, ResearchResult, RunUsage
from deepsift.deps import Deps
from deepsift.eval.reports import score
from deepsift.llm.chat import chat_model
from deepsift.llm.embedders import get_embedder
from deepsift.nodes.reflect import MAX_NEW_QUERIES
from deepsift.records import Chunk, Source
from deepsift.report.checks.claims import hold_to_evidence, unsupported
from deepsift.report.output.citations import cited_report
from deepsift.report.output.headings import Labels, echoes_query
from deepsift.report.question.parts import question_parts
from deepsift.report.writing.cited_text import CitedSentence
from deepsift.report.writing.length import SHAPES
from deepsift.report.writing.writer import CONCLUSION_SENTENCES
from deepsift.text.amounts import numbers

from fake_openai import FakeOpenAI, last_user_text, schema_name
from scripted import ScriptedResearcher

QUESTION = "Why was Kestrel Works built, what did it cost against its budget, and did it work?"
FALSE = "The plant cost €99.9m in the end."


def run(
    tmp_path, sample_store, researcher=None, settings_update=None, question=QUESTION, **options
):
    researcher = researcher or ScriptedResearcher()
    with FakeOpenAI(researcher) as server:
        settings = Settings(data_dir=tmp_path, llm_base_url=server.url, llm_api_key="t")
        settings = settings.model_copy(update=settings_update or {})
        deps = Deps(settings, sample_store, get_embedder(settings), chat_model(settings))
        result = research(question, settings, deps=deps, **options)
    return result, server.requests


def body_words(report: str, says: Labels | None = None) -> int:
    """Words of the summary, sections and conclusion: not the title, headings, Notes, Sources
    (headed in the report's language, `says`)."""
    notes, sources = (says.notes, says.sources) if says else ("Notes", "Sources")
    body = report.split(f"\n## {notes}")[0].split(f"\n## {sources}")[0]
    lines = [line for line in body.splitlines() if line.strip() and not line.startswith(("#", "|"))]
    return len(re.sub(r"\[\d+\]", "", " ".join(lines)).split())


def headings(report: str) -> list[str]:
    return re.findall(r"^## (.*)$", report, re.MULTILINE)


def test_the_report_has_a_title_its_parts_answers_headed_sections_a_conclusion_and_sources(
    tmp_path, sample_store
):
    result, _ = run(tmp_path, sample_store)

    report = result.report
    assert report.startswith("# What the evidence says\n")  # the model's title
    found = headings(report)
    assert found[0] == "Key findings" and "Conclusion" in found and found[-1] == "Sources"
    # One finding for each part of the question the evidence answers: its answer.
    findings = report.split("## Key findings\n\n")[1].split("\n\n")[0].splitlines()
    assert 2 <= len(findings) <= len(question_parts(QUESTION)) == 3
    assert all(re.match(r"- .+\[\d+\]\.$", line) for line in findings)
    # The documents cited, from their own facts, in the order of their dates.
    assert found[1] == "Documents"
    table = report.split("## Documents\n\n")[1].split("\n\n")[0].splitlines()
    assert table[0] == "| Document | Title | Date | Status | Authors | What it says |"
    assert any("Lake Veldmere Water Authority" in row for row in table)  # its authors' fact
    assert all(re.search(r"\[\d+\] \|$", row) for row in table[2:])
    # Each answered part got one section, headed by the part in its own words (the model's
    # headings are for a report in another language).
    sections = found[2 : found.index("Conclusion")]
    assert sections and set(sections) <= set(question_parts(QUESTION))


def test_the_frame_caps_its_lists_and_an_endpoint_gets_no_embedded_server_penalties(
    tmp_path, sample_store
):
    _, requests = run(tmp_path, sample_store)

    schemas = [b["response_format"]["json_schema"] for b in requests]
    # Query lists are bounded in the schema: a small model otherwise lists until max_tokens.
    planned = next(s["schema"]["properties"] for s in schemas if s["name"] == "SubQueries")
    assert planned["queries"]["maxItems"] == Settings().max_sub_queries
    asked = next(s["schema"]["properties"] for s in schemas if s["name"] == "Reflection")
    assert asked["queries"]["maxItems"] == MAX_NEW_QUERIES
    # A heading for each part answered, a conclusion of a few sentences.
    frame = next(b for b in requests if schema_name(b) == "ReportFrame")
    parts = len(re.findall(r"^\d+\. ", last_user_text(frame), re.MULTILINE))
    listed = frame["response_format"]["json_schema"]["schema"]["properties"]
    assert listed["headings"]["maxItems"] == parts >= 2
    assert listed["conclusion"]["maxItems"] == CONCLUSION_SENTENCES
    # A section restates exactly the sentences it is asked to, no more, no fewer.
    sections = [b for b in requests if schema_name(b) == "Answered"]
    assert sections
    for body in sections:
        asked = re.search(r"then restate sentences ([\d, ]+|none), in order", last_user_text(body))
        count = 0 if asked[1] == "none" else len(asked[1].split(","))
        held = body["response_format"]["json_schema"]["schema"]["properties"]["sentences"]
        assert held["minItems"] == held["maxItems"] == count
    # The repetition penalties are llama.cpp's fields, for the embedded model only.
    assert not any({"dry_multiplier", "repeat_last_n"} & body.keys() for body in requests)


def test_a_brief_report_stays_within_its_length(tmp_path, sample_store):
    """A length bounds a report; its chosen documents' evidence may give fewer words (a
    section says only what they add to its part's answer)."""
    result, requests = run(tmp_path, sample_store, length="brief")

    target = SHAPES["brief"].words
    assert 0.3 * target <= body_words(result.report) <= 1.3 * target, body_words(result.report)
    # One call a section (a part of the question has a section of its own).
    fixed = {"Key findings", "Documents", "Conclusion", "Notes", "Sources"}
    sections = sum(h not in fixed for h in headings(result.report))
    assert sum(schema_name(r) == "Answered" for r in requests) <= sections


def test_standard_is_longer_than_brief_and_shorter_than_long(tmp_path, sample_store):
    words = {
        length: body_words(run(tmp_path / length, sample_store, length=length)[0].report)
        for length in ("brief", "standard", "long")
    }
    assert words["brief"] < words["standard"] < words["long"]


def test_a_report_in_german_has_german_headings_and_every_prompt_asks_for_german(
    tmp_path, sample_store
):
    result, requests = run(tmp_path, sample_store, language="German")

    found = headings(result.report)
    assert found[0] == "Wichtigste Ergebnisse" and "Fazit" in found and found[-1] == "Quellen"
    assert found[1] == "Dokumente"  # the table of the documents, its columns in German too
    assert "| Dokument | Titel | Datum | Status | Autoren | Inhalt |" in result.report
    assert all(h.startswith("Ergebnisse: ") for h in found[2 : found.index("Fazit")])
    writing = [r for r in requests if "Report question:" in last_user_text(r)]
    assert writing and all("every sentence in German" in last_user_text(r) for r in writing)


def test_a_restatement_whose_figure_its_sentence_lacks_gives_way_to_the_sentence_and_is_noted(
    tmp_path, sample_store
):
    result, requests = run(tmp_path, sample_store, ScriptedResearcher(false_figure=FALSE))

    assert "99.9" not in result.report
    restating = [r for r in requests if schema_name(r) == "Answered"]
    first = re.search(r"^\[1\] <excerpt>(.*)</excerpt>$", last_user_text(restating[0]), re.M)[1]
    assert "then restate sentences 1" in last_user_text(restating[0])
    assert first.rstrip(".") in result.report  # the document's own words, in its place
    notes = result.report.split("## Notes")[1].split("## Sources")[0]
    assert "given in their document's own words" in notes


def test_a_figure_the_frame_states_that_no_cited_excerpt_holds_is_rewritten_or_dropped(
    tmp_path, sample_store
):
    scripted = ScriptedResearcher(rewrite_fails=True)

    def inventing(body):
        reply = scripted(body)
        if schema_name(body) == "ReportFrame":
            reply["conclusion"][0]["text"] = FALSE
        return reply

    result, requests = run(tmp_path, sample_store, inventing)

    assert "99.9" not in result.report
    assert any("not in its excerpts: 99,900,000" in last_user_text(r) for r in requests)
    assert result.usage.claims_dropped >= 1
    notes = result.report.split("## Notes")[1].split("## Sources")[0]
    assert "do not state their figures or names" in notes


def test_amounts_compare_by_value_whatever_their_notation():
    excerpt = ["The overrun came to EUR 4,700,000 by March 2024."]

    for said in ("€4.7m", "4.7 million euros", "EUR 4,700,000", "4.7 mn"):
        assert unsupported(f"The overrun was {said} in March 2024.", excerpt) == [], said
    assert unsupported("The overrun was €1.8m.", excerpt) == ["1,800,000"]
    assert unsupported("It closed in June 2024.", excerpt) == ["june"]
    assert numbers("It rose 12% [3].") == [(12.0, 0.5)]  # citation marks are not numbers


def test_a_figure_in_the_scale_a_table_names_as_its_unit_is_held():
    table = ["Item EUR million Main contract award value 21.9 Total out-turn cost 29.3"]
    markdown = ["| Element | € million |\n|---|---|\n| Risk contingency | 1.8 |"]

    assert unsupported("It cost €29.3 million against an award of EUR 21.9m.", table) == []
    assert unsupported("The contingency was €1.8m.", markdown) == []
    # Without a unit, a bare number is only itself.
    assert unsupported("It cost €29.3 million.", ["It cost 29.3 in all."]) == ["29,300,000"]


@pytest.mark.parametrize("heading", ["Warum wurde es gebaut?", "Fazit", "Quellen"])
def test_a_translated_heading_that_is_a_question_or_the_reports_own_gives_way_to_its_part(
    tmp_path, sample_store, heading
):
    scripted = ScriptedResearcher()

    def heading_badly(body):
        reply = scripted(body)
        if schema_name(body) == "ReportFrame":
            reply["headings"] = [heading] * len(reply["headings"])
        return reply

    result, _ = run(tmp_path, sample_store, heading_badly, language="German")

    found = headings(result.report)
    found = found[2 : found.index("Fazit")]  # after the key findings and the documents
    assert set(found) <= set(question_parts(QUESTION))
    assert len(set(found)) == len(found) >= 2
    assert headings(result.report).count("Fazit") == 1 and headings(result.report)[-1] == "Quellen"


def test_a_heading_that_starts_with_sources_keeps_the_rest_of_the_report():
    chunk = Chunk(id="a", text="t", source="/a.md", title="A", collection="c")
    body = "# Q\n\n## Sources of sediment in the harbor\n\nSilt comes from the river [1].\n\n## End"

    report, sources = cited_report(body, [chunk], [])

    assert "Silt comes from the river [1]." in report and "## End" in report
    assert len(sources) == 1 and report.count("## Sources\n") == 1


def test_report_scores_count_what_a_reader_can_check():
    chunk = Chunk(
        id="a", text="The plant cost €29.3 million.", source="/a.md", title="A", collection="c"
    )
    report = (
        "# Title\n\n## Key findings\n\n- It cost €29.3m [1].\n\n## Cost\n\n"
        "It cost €31m in the end [1]. Nobody knows more.\n\n"
        "## Who paid for it?\n\nThe town [1].\n\n## Conclusion\n\nIt cost more [1].\n\n"
        "## Sources\n\n[1] A — `a.md`\n"
    )
    result = ResearchResult(
        agent="deepsift", status="done", question="What did it cost?", answer="", report=report,
        sources=[CitedSource(n=1, title="A", source="/a.md")], sub_queries=[],
        iterations=1, usage=RunUsage(llm_calls=3), notes=[], thread_id="t",
    )  # fmt: skip

    scores = score(result, [Source(n=1, title="A", source="/a.md", chunk_ids=["a"])], {"a": chunk})

    assert scores["sections"] == 2 and scores["documents"] == 1 and scores["llm_calls"] == 3
    assert scores["reader_headings"] == 1  # "Cost"; not the question "Who paid for it?"
    assert echoes_query("Who paid for it?", []) and echoes_query("Cost.", ["cost"])
    assert not echoes_query("Cost", ["Who paid?"])
    assert scores["cited_share"] == 0.8  # 4 of 5 sentences cite
    assert scores["claim_pass"] == 0.5 and scores["unheld_numbers"] == 1  # €31m
    assert scores["words"] == 17


def test_a_sentence_citing_the_wrong_excerpt_cites_the_one_that_holds_its_figures():
    excerpts = {1: "The board met in March.", 2: "The plant cost EUR 29.3 million in 2024."}
    sentences = [
        CitedSentence(text="The plant cost €29.3m in 2024.", excerpts=[1]),
        CitedSentence(text="It cost €5m.", excerpts=[2]),
    ]

    kept, counts = hold_to_evidence(sentences, excerpts, "What did it cost?", rewrite=None)

    assert kept[0] is not None and 2 in kept[0].excerpts
    assert kept[1] is None  # no excerpt holds €5m, and no rewrite was allowed: dropped
    assert (counts.checked, counts.rewritten, counts.dropped) == (2, 0, 1)


def test_sections_the_model_gives_one_heading_keep_distinct_headings(tmp_path, sample_store):
    scripted = ScriptedResearcher()

    def one_heading(body):
        reply = scripted(body)
        if schema_name(body) == "ReportFrame":
            reply["headings"] = ["Kestrel Works"] * len(reply["headings"])
        return reply

    result, _ = run(tmp_path, sample_store, one_heading, language="French")

    sections = headings(result.report)[2:-2]  # after the key findings and the documents
    assert sections[0] == "Kestrel Works" and len(set(sections)) == len(sections) >= 2
    assert sections[1] in question_parts(QUESTION)


def test_a_conclusion_that_only_repeats_the_key_findings_is_left_out_and_noted(
    tmp_path, sample_store
):
    scripted = ScriptedResearcher()

    def repeating(body):
        reply = scripted(body)
        if schema_name(body) == "ReportFrame":  # each part's answer, as it was shown
            shown = re.findall(r"^\d+\. .*\n<excerpt>\n(.*?) \[(\d+)\]", last_user_text(body), re.M)
            reply["conclusion"] = [{"text": said, "excerpts": [int(n)]} for said, n in shown]
        return reply

    result, _ = run(tmp_path, sample_store, repeating)

    findings = result.report.split("## Key findings\n\n")[1].split("\n\n")[0].splitlines()
    ending = result.report.split("## Conclusion\n\n")[-1].split("\n\n")[0]
    assert findings and not any(re.sub(r" \[\d+\]\.$", "", f[2:]) in ending for f in findings)
    notes = result.report.split("## Notes")[1].split("## Sources")[0]
    assert "it says again what another sentence of the report says" in notes


def test_the_opening_of_the_document_a_part_s_search_ranks_first_is_gathered(tmp_path):
    from deepsift.ingest.pipeline import ingest
    from deepsift.report.question.parts import part_queries, with_names
    from deepsift.retrieval.search import search_parts
    from deepsift.store import Store

    folder = tmp_path / "rfcs"
    folder.mkdir()
    loops = "\n\n".join(
        f"## Loops, part {n}\n\nA `while` loop in a const fn runs while compiling; loop {n} "
        "counts its steps, and a loop without an end is stopped by the step limit."
        for n in range(1, 7)
    )
    (folder / "2344-const-looping.md").write_text(
        "# Const looping\n\n## Summary\n\nThis RFC lets constants be computed by repeating "
        f"work at build time.\n\n{loops}\n"
    )
    (folder / "0001-other.md").write_text("# Other\n\n## Summary\n\nAbout something else.\n")
    settings = Settings(data_dir=tmp_path / "data", top_k=2)
    store, embedder = Store(settings), get_embedder(settings)
    try:
        ingest([folder], "rfcs", store, embedder, settings, description="RFCs")
        deps = Deps(settings, store, embedder, None)
        part = "How loops run in a const fn"
        searched = [
            c.position for c in store.search("rfcs", part, embedder.embed_queries([part])[0], 2)
        ]
        queries = [[with_names(q, part) for q in part_queries(part)]]
        found, leads = search_parts([part], queries, ["rfcs"], [], deps)
    finally:
        store.close()

    assert 0 not in searched  # its search alone misses the summary
    assert leads[0][0] == ("rfcs", str((folder / "2344-const-looping.md").resolve()))
    assert any(c.position == 0 and "repeating work" in c.text for c in found.values())
