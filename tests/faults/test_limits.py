"""The same limits on every way in: a question's length, a JSON body's size, the file -o
writes, a fact's markup, and the report versions a thread keeps."""

import pytest
from starlette.testclient import TestClient

from deepsift.cli import main
from deepsift.records import Chunk
from deepsift.report.output.documents_table import documents_table
from deepsift.report.output.export import report_bytes
from deepsift.report.output.headings import labels
from deepsift.serve.app import create_app


def _one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    stderr = capsys.readouterr().err
    assert "Traceback" not in stderr
    (line,) = stderr.strip().splitlines()
    return line


@pytest.mark.parametrize(
    "argv",
    [["ask", "somethread", "Why? " * 20_000], ["research", "Why? " * 20_000]],
    ids=["ask", "research"],
)
def test_a_100_kb_question_on_the_command_line_is_one_line_exit_2(argv, settings, capsys):
    with pytest.raises(SystemExit) as ended:
        main(argv)

    assert ended.value.code == 2
    line = _one_error_line(capsys)
    assert "100,000 characters, over the 4,000 a question may have" in line, line
    assert not settings.checkpoint_path.exists()  # nothing was kept


@pytest.mark.parametrize(
    "argv",
    [
        ["research", "-o", "/proc/self/x.md", "What does Kestrel Works remove?"],
        ["ask", "somethread", "Shorter", "-o", "/proc/self/x.md"],
    ],
    ids=["research", "ask"],
)
def test_an_output_file_the_os_refuses_is_one_line_exit_2_before_any_work(argv, capsys):
    with pytest.raises(SystemExit) as ended:
        main(argv)

    assert ended.value.code == 2
    line = _one_error_line(capsys)
    assert line.startswith("error: -o /proc/self/x.md: cannot write there ("), line


def test_a_50_mb_json_body_is_refused_with_413_unread(settings, deps):
    body = b'{"question": "' + b"x" * 50_000_000 + b'"}'
    chunked = (body[i : i + 1_000_000] for i in range(0, len(body), 1_000_000))
    json = {"content-type": "application/json"}
    with TestClient(create_app(settings, deps), base_url="http://127.0.0.1:8000") as client:
        asked = client.post("/api/runs/somethread/ask", content=body, headers=json)
        started = client.post("/api/runs", content=body, headers=json)
        unsized = client.post("/api/runs/somethread/ask", content=chunked, headers=json)

    for response in (asked, started, unsized):
        assert response.status_code == 413, response.text
        assert "64,000 bytes at most" in response.json()["error"]


def test_a_fact_s_markup_is_escaped_in_markdown_and_html_never_deleted():
    cited = [
        (n, Chunk(id=f"c{n}", text="Body.", source=f"/d/{n}.md", title=f"T{n}", collection="x"))
        for n in (1, 2)
    ]
    cited[0][1].facts = {"id": "RFC 1", "title": "<b>x</b>", "status": "<script>alert(1)</script>"}
    cited[1][1].facts = {"id": "RFC 2", "title": "Plain"}
    table = documents_table(cited, labels(""))
    report = f"# Report\n\nText [1] [2].\n\n{table}\n"

    markdown = report_bytes(report, "md").decode()
    page = report_bytes(report, "html").decode()

    assert (
        "“&lt;b&gt;x&lt;/b&gt;”" in markdown and "&lt;script&gt;alert(1)&lt;/script&gt;" in markdown
    )
    assert "<b>x</b>" not in markdown and "<script>" not in markdown
    assert "&lt;b&gt;x&lt;/b&gt;" in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<b>x</b>" not in page and "<script>" not in page


# --- the report versions a thread keeps ---


@pytest.fixture
def finished(tmp_path, sample_store):
    """A finished run on the sample corpus, with a slow scripted endpoint (so rewrites overlap)."""
    from test_report import QUESTION

    from deepsift import Settings, research
    from deepsift.deps import Deps
    from deepsift.llm.chat import chat_model
    from deepsift.llm.embedders import get_embedder

    from fake_openai import FakeOpenAI
    from scripted import ScriptedResearcher

    with FakeOpenAI(ScriptedResearcher(), delay=0.2) as server:
        settings = Settings(
            data_dir=tmp_path, llm_base_url=server.url, llm_api_key="t", max_report_versions=4
        )
        deps = Deps(settings, sample_store, get_embedder(settings), chat_model(settings))
        yield research(QUESTION, settings, deps=deps), settings, deps


def test_60_rewrites_keep_at_most_the_setting_s_versions_and_the_checkpoint_stops_growing(
    finished,
):
    from deepsift.api import ask, read_run

    result, settings, deps = finished
    sizes = []
    for n in range(60):
        asked = ask(result.thread_id, "as a table", settings, deps=deps)
        assert asked.version == n + 2
        sizes.append(settings.checkpoint_path.stat().st_size)
    run = read_run(result.thread_id, settings, deps)[0]

    assert sorted(run.versions) == [1, 59, 60, 61]  # the run's own and the latest rewrites
    assert run.exported().startswith(run.versions[61].rstrip())
    assert any("oldest report versions were dropped" in note for note in run.notes)
    assert sizes[-1] <= sizes[9]  # grew while the versions did, not after


def test_two_concurrent_rewrites_get_distinct_version_numbers(finished):
    from concurrent.futures import ThreadPoolExecutor

    from deepsift.api import ask, read_run

    result, settings, deps = finished
    with ThreadPoolExecutor(2) as pool:
        asked = list(
            pool.map(
                lambda q: ask(result.thread_id, q, settings, deps=deps), ["brief", "in German"]
            )
        )
    run = read_run(result.thread_id, settings, deps)[0]

    assert sorted(a.version for a in asked) == [2, 3]
    assert sorted(run.versions) == [1, 2, 3]
    assert {f.question for f in run.followups} == {"brief", "in German"}
