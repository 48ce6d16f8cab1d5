"""Follow-ups on a finished run (deepsift ask): answered from its evidence first, searched
again only when that does not answer, kept in its thread; its report rewritten without a search.
On the sample corpus and the scripted endpoint."""

import json
import os
import signal
import subprocess
import sys
import threading

import pytest
from test_report import QUESTION, body_words

from deepsift import Settings
from deepsift.api import ask, read_run, research
from deepsift.deps import Deps
from deepsift.errors import UserError
from deepsift.followups import questions as followup
from deepsift.followups.questions import NOT_SAID, answer_followup
from deepsift.followups.rewrites import Reshape, reshaping
from deepsift.llm.chat import chat_model
from deepsift.llm.embedders import get_embedder
from deepsift.records import Source
from deepsift.report.output.headings import labels
from deepsift.report.writing.length import SHAPES

from conftest import CORPUS, run_cli
from fake_openai import FakeOpenAI, last_user_text, schema_name
from scripted import ScriptedResearcher, ScriptedSearchO1, follow_up_answer

COST = "What did Kestrel Works cost in the end?"
MOON = "What colour is the moon over Veldmere?"
LIGHTNING = "What struck the overhead 20 kV line at Kestrel Works in July 2024?"


@pytest.fixture
def finished(tmp_path, sample_store):
    """A finished research run on the sample corpus, its settings and deps, and the endpoint
    (whose requests the test reads)."""
    with FakeOpenAI(ScriptedResearcher()) as server:
        settings = Settings(data_dir=tmp_path, llm_base_url=server.url, llm_api_key="t")
        deps = Deps(settings, sample_store, get_embedder(settings), chat_model(settings))
        result = research(QUESTION, settings, deps=deps)
        yield result, settings, deps, server


@pytest.fixture
def searches(monkeypatch):
    """Every search of a collection or the web made after the run: (query, source) each."""
    made = []
    real = followup.search_source

    def counted(query, source, deps, *args, **kwargs):
        made.append((query, source))
        return real(query, source, deps, *args, **kwargs)

    monkeypatch.setattr(followup, "search_source", counted)
    return made


def test_a_follow_up_the_run_s_evidence_answers_takes_one_call_and_adds_nothing_to_the_run(
    finished, searches
):
    result, settings, deps, server = finished
    before = len(server.requests)
    chunks = len(read_run(result.thread_id, settings, deps=deps)[0].sources)

    answer = ask(result.thread_id, COST, settings, deps=deps)

    assert answer.kind == "answer" and "29.3 million" in answer.answer
    assert answer.usage.llm_calls == 1 and len(server.requests) == before + 1
    # The run's sources were searched again (no model call); its own excerpts were nearer.
    assert {source for _, source in searches} == {"operations", "science"}
    assert answer.searched == []
    report_numbers = {s.source: s.n for s in result.sources}
    assert answer.sources and all(report_numbers[s.source] == s.n for s in answer.sources)
    assert f"[{answer.sources[0].n}]" in answer.answer
    assert len(read_run(result.thread_id, settings, deps=deps)[0].sources) == chunks


def test_a_follow_up_the_evidence_does_not_answer_searches_the_run_s_sources(deps, searches):
    minutes = str(CORPUS / "operations" / "board_minutes_2021-09-14.md")
    chunks = {c.id: c for c in deps.store.opening("operations", minutes, 100)}
    values = {
        "chunks": chunks,
        "sources_to_search": ["operations", "science"],
        "sources": [Source(n=1, title="Minutes", source=minutes, chunk_ids=list(chunks)[:1])],
    }

    said, added = answer_followup(values, LIGHTNING, deps)

    assert [source for _, source in searches] == ["operations", "science"]
    assert "lightning" in said.text.casefold()
    assert said.sources and all(s.n >= 2 for s in said.sources)  # after the report's [1]
    assert "incident_report" in said.sources[0].source
    assert added and not set(added) & set(chunks)
    assert said.searched == [f"the collection operations, the collection science for “{LIGHTNING}”"]


def test_what_nothing_supports_is_said_not_to_be_in_the_documents_naming_what_was_searched(
    finished,
):
    result, settings, deps, _ = finished

    answer = ask(result.thread_id, MOON, settings, deps=deps)

    assert answer.answer.startswith(NOT_SAID) and answer.sources == []
    assert "the collection operations" in answer.answer and "excerpts" in answer.answer
    assert answer.usage.llm_calls <= 2


def test_an_answer_that_fails_the_claim_check_is_not_given(tmp_path, sample_store):
    def researcher(body):
        if schema_name(body) == "FollowUpAnswer":
            return {
                "found": True,
                "sentences": [{"text": "It cost €99.9 million.", "excerpts": [1]}],
            }
        return ScriptedResearcher()(body)

    with FakeOpenAI(researcher) as server:
        settings = Settings(data_dir=tmp_path, llm_base_url=server.url, llm_api_key="t")
        deps = Deps(settings, sample_store, get_embedder(settings), chat_model(settings))
        result = research(QUESTION, settings, deps=deps)
        answer = ask(result.thread_id, COST, settings, deps=deps)

    assert answer.answer.startswith(NOT_SAID) and "99.9" not in answer.answer
    assert answer.usage.llm_calls == 1


def test_the_conversation_is_kept_in_the_thread_and_exported_as_an_appendix(finished):
    result, settings, deps, _ = finished

    first = ask(result.thread_id, COST, settings, deps=deps)
    ask(result.thread_id, MOON, settings, deps=deps)
    run, excerpts = read_run(result.thread_id, settings, deps=deps)

    assert [f.question for f in run.followups] == [COST, MOON] and run.asking == ""
    assert run.followups[0].answer == first.answer
    cited = {e.n for e in excerpts}
    assert {s.n for s in first.sources} <= cited  # its citations open their excerpts
    exported = run.exported()
    assert exported.startswith(result.report.rstrip())
    appendix = exported.split("## Follow-up questions", 1)[1]
    assert f"### {COST}" in appendix and first.answer in appendix and NOT_SAID in appendix


def test_in_german_and_brief_rewrite_the_report_without_a_search(finished, monkeypatch):
    result, settings, deps, server = finished
    store_searches = []
    monkeypatch.setattr(
        deps.store, "search", lambda *a, **k: store_searches.append(a) or pytest.fail("searched")
    )
    monkeypatch.setattr(deps.store, "opening", lambda *a, **k: pytest.fail("searched"))
    before = len(server.requests)

    german = ask(result.thread_id, "Rewrite it in German", settings, deps=deps)
    brief = ask(result.thread_id, "Make it brief", settings, deps=deps)

    assert store_searches == [] and german.searched == [] and brief.searched == []
    says = labels("German")
    assert german.kind == "report" and (german.version, brief.version) == (2, 3)
    for version in (german.report, brief.report):  # brief goes on in German
        assert f"## {says.findings}" in version and f"## {says.sources}" in version
    written = [r for r in server.requests[before:] if "Report question:" in last_user_text(r)]
    assert written and all("every sentence in German" in last_user_text(r) for r in written)
    assert body_words(brief.report, says) < body_words(german.report, says)
    brief_words = body_words(brief.report, says)
    assert 0.3 * SHAPES["brief"].words <= brief_words <= 1.3 * SHAPES["brief"].words
    # The checks that read English words are named in the Notes, not skipped silently.
    assert f"## {says.notes}" in brief.report and "Not checked in German" in brief.report
    run, _ = read_run(result.thread_id, settings, deps=deps)
    assert run.versions == {1: result.report, 2: german.report, 3: brief.report}
    assert run.report == result.report  # the run's own version is kept beside the new ones


def test_as_a_table_tabulates_the_latest_version_without_a_model_call(finished):
    result, settings, deps, server = finished
    before = len(server.requests)

    table = ask(result.thread_id, "as a table, please", settings, deps=deps)

    assert len(server.requests) == before and table.usage.llm_calls == 0
    rows = [line.split(" | ") for line in table.report.splitlines() if line.startswith("| [")]
    titles = {s.n: s.title for s in result.sources}
    assert len(rows) >= 2
    for document, said in rows:
        n = int(document.removeprefix("| [").split("]")[0])
        assert document == f"| [{n}] {titles[n]}" and f"[{n}]" in said
    assert table.report.split("\n## Sources\n")[1] == result.report.split("\n## Sources\n")[1]


def test_an_exported_version_renumbers_the_answers_to_its_own_sources(finished):
    result, settings, deps, _ = finished
    ask(result.thread_id, "in German", settings, deps=deps)
    answer = ask(result.thread_id, COST, settings, deps=deps)
    run, _ = read_run(result.thread_id, settings, deps=deps)

    german = run.followups[0]
    number = {s.source: s.n for s in german.sources}
    assert german.language == "German" and "## Follow-up questions" in run.exported(1)
    assert "## Follow-up questions" not in run.exported(2)
    appendix = run.exported(2).split("## Folgefragen", 1)[1]
    for source in answer.sources:
        assert f"[{number[source.source]}] " in appendix
    with pytest.raises(UserError, match="versions 1 to 2"):
        run.exported(3)


@pytest.mark.parametrize(
    ("request_", "shape"),
    [
        ("shorter, in German", Reshape(length="brief", language="German")),
        ("Translate it into French", Reshape(language="French")),
        ("as a table", Reshape(table=True)),
        ("Add a section on the funding", Reshape(section="the funding")),
        ("Which RFC made the syntax shorter?", None),
        ("What did it cost?", None),
        ("According to the expanded RFC, what does it allow?", None),
        ("Could you make it shorter?", Reshape(length="brief")),
    ],
)
def test_a_request_is_read_as_a_rewrite_or_as_a_question(request_, shape):
    assert reshaping(request_) == shape


def test_a_follow_up_on_a_search_o1_run_is_answered_and_a_rewrite_refused(tmp_path, sample_store):
    o1 = ScriptedSearchO1(queries=["Kestrel Works final cost"])

    def responder(body):
        if schema_name(body) == "FollowUpAnswer":
            return follow_up_answer(last_user_text(body))
        return o1(body)

    with FakeOpenAI(responder) as server:
        settings = Settings(data_dir=tmp_path, llm_base_url=server.url, llm_api_key="t")
        deps = Deps(settings, sample_store, get_embedder(settings), chat_model(settings))
        result = research(COST, settings, deps=deps, agent="search-o1")
        answer = ask(result.thread_id, COST, settings, deps=deps)
        with pytest.raises(UserError, match="made by search-o1") as refused:
            ask(result.thread_id, "in German", settings, deps=deps)

    assert "29.3 million" in answer.answer and answer.sources
    assert "\n" not in str(refused.value)


def test_asking_an_unknown_or_unfinished_run_is_one_line(finished):
    _, settings, deps, _ = finished
    with pytest.raises(UserError, match="no run has thread id nope"):
        ask("nope", COST, settings, deps=deps)


def _researched(tmp_path, data, server) -> tuple[dict[str, str], str]:
    """The environment of a CLI on `data` and the loopback model, and a run researched there."""
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "DEEPSIFT_DATA_DIR": str(data),
        "DEEPSIFT_LLM_BASE_URL": server.url,
        "DEEPSIFT_LLM_API_KEY": "t",
    }
    researched = run_cli("research", QUESTION, "--json", data=data, **env)
    assert researched.returncode == 0, researched.stderr
    return env, json.loads(researched.stdout)["thread_id"]


def test_a_rewrite_killed_part_way_converges_when_asked_again(tmp_path):
    """`deepsift ask THREAD "in German"` killed (SIGKILL) once its sections are written, while
    the frame is asked; asked again with no question, it finishes that rewrite from the
    section replies it had already received, and keeps it once."""
    data = tmp_path / "data"
    ingested = run_cli("ingest", str(CORPUS / "operations"), "--collection", "ops", data=data)
    assert ingested.returncode == 0, ingested.stderr
    scripted = ScriptedResearcher()
    asked: list[str] = []
    armed = threading.Event()  # once the run is done: the rewrite's frame call blocks
    blocking = threading.Event()
    released = threading.Event()

    def responder(body):
        asked.append(schema_name(body))
        if schema_name(body) == "ReportFrame" and armed.is_set() and not blocking.is_set():
            blocking.set()
            released.wait(60)  # killed while it waits
        return scripted(body)

    with FakeOpenAI(responder) as server:
        env, thread = _researched(tmp_path, data, server)
        started = len(asked)
        armed.set()
        command = [sys.executable, "-m", "deepsift", "ask", thread]
        rewriting = subprocess.Popen(
            [*command, "in German"], env=env, cwd=tmp_path, start_new_session=True
        )
        assert blocking.wait(120), "the rewrite never asked for its frame"
        os.killpg(rewriting.pid, signal.SIGKILL)
        rewriting.wait()
        released.set()
        killed_at = len(asked)
        again = subprocess.run(
            [*command, "--json"], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300
        )
        resumed = asked[killed_at:]
        answered = run_cli("ask", thread, COST, "--json", data=data, **env)
        listed = run_cli("ask", thread, data=data, **env)
        exported = run_cli("ask", thread, "-o", str(tmp_path / "report.md"), data=data, **env)
        run, _ = read_run(thread, Settings(data_dir=data, llm_base_url=server.url))

    assert again.returncode == 0, again.stderr
    said = json.loads(again.stdout)
    assert set(said) >= {"answer", "sources", "usage", "thread_id"}
    assert said["question"] == "in German" and said["kind"] == "report" and said["version"] == 2
    assert "## Quellen" in said["report"]
    # The sections written before the kill were not asked again: their replies were kept.
    assert "Answered" in asked[started:killed_at] and "Answered" not in resumed
    assert [f.question for f in run.followups] == ["in German", COST] and run.asking == ""
    # The CLI lists the conversation and exports the latest version with the answer appended.
    assert answered.returncode == listed.returncode == exported.returncode == 0
    assert "1. in German" in listed.stderr and f"2. {COST}" in listed.stderr
    written = (tmp_path / "report.md").read_text()
    assert "## Quellen" in written and f"## Folgefragen\n\n### {COST}" in written
    assert json.loads(answered.stdout)["answer"] in written


REWRITES = ["in German", "shorter", "in French", "longer", "brief"]


def test_five_rewrites_each_killed_mid_call_converge_to_one_version_each(tmp_path):
    """Five rewrites, each killed (SIGKILL) while its frame call is in flight, each finished
    by `ask THREAD` with no question: every one is kept once, as the next version, and the
    thread is left asking nothing."""
    data = tmp_path / "data"
    ingested = run_cli("ingest", str(CORPUS / "operations"), "--collection", "ops", data=data)
    assert ingested.returncode == 0, ingested.stderr
    scripted = ScriptedResearcher()
    blocking = threading.Event()  # a rewrite's frame call is waiting: kill it now
    released = threading.Event()
    armed = threading.Event()

    def responder(body):
        if schema_name(body) == "ReportFrame" and armed.is_set():
            armed.clear()
            blocking.set()
            released.wait(60)  # killed while it waits
        return scripted(body)

    finished = []
    with FakeOpenAI(responder) as server:
        env, thread = _researched(tmp_path, data, server)
        command = [sys.executable, "-m", "deepsift", "ask", thread]
        for request in REWRITES:
            blocking.clear()
            released.clear()
            armed.set()
            rewriting = subprocess.Popen(
                [*command, request], env=env, cwd=tmp_path, start_new_session=True
            )
            assert blocking.wait(120), f"the rewrite {request!r} never asked for its frame"
            os.killpg(rewriting.pid, signal.SIGKILL)
            rewriting.wait()
            released.set()
            again = subprocess.run(
                [*command, "--json"], env=env, cwd=tmp_path, capture_output=True, text=True,
                timeout=300,
            )  # fmt: skip
            assert again.returncode == 0, again.stderr
            finished.append(json.loads(again.stdout))
        run, _ = read_run(thread, Settings(data_dir=data, llm_base_url=server.url))

    assert [(f["question"], f["version"]) for f in finished] == [
        (request, n) for n, request in enumerate(REWRITES, 2)
    ]
    assert [f.question for f in run.followups] == REWRITES and run.asking == ""
    assert sorted(run.versions) == list(range(1, len(REWRITES) + 2))
