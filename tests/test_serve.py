"""deepsift serve's API, in process: runs streamed as server-sent events, reports, uploads, and
the rules that keep the server to its owner (token, loopback names, upload limits)."""

import json
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from starlette.routing import Route
from starlette.testclient import TestClient

import deepsift.serve
from deepsift.config import Settings
from deepsift.llm.local_model import free_port
from deepsift.serve.app import create_app
from deepsift.serve.runs import INDEX_FILE
from deepsift.serve.uploads import safe_path

from conftest import CORPUS, run_cli
from fake_openai import FakeOpenAI
from scripted import ScriptedResearcher

QUESTION = "Why was Kestrel Works built and did it reduce phosphorus in Lake Veldmere?"


def sse(body: str) -> list[tuple[str, dict]]:
    """The (event, data) pairs of a server-sent-events body, in order."""
    events = []
    for block in body.strip().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines())
        events.append((fields["event"], json.loads(fields["data"])))
    return events


def run_events(client: TestClient, thread_id: str) -> list[tuple[str, dict]]:
    with client.stream("GET", f"/api/runs/{thread_id}/events") as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        return sse(response.read().decode())


@pytest.fixture
def client(settings: Settings, deps):
    with TestClient(create_app(settings, deps), base_url="http://127.0.0.1:8000") as client:
        yield client


def test_a_run_streams_its_steps_in_order_then_the_report_which_is_kept_and_exported(client):
    started = client.post("/api/runs", json={"question": QUESTION, "length": "brief"})
    assert started.status_code == 202, started.text
    thread_id = started.json()["thread_id"]

    events = run_events(client, thread_id)

    names = [name for name, _ in events]
    assert names[0] == "started" and names[-1] == "result"
    assert set(names[1:-1]) == {"step"}
    nodes = [data["node"] for name, data in events if name == "step"]
    assert nodes[:3] == ["decompose", "route", "search"] and nodes[-1] == "synthesize"
    first = "".join(text for text, _ in events[1][1]["lines"][0])
    assert first.startswith("sub-queries") and ["sub-queries", "bold"] in events[1][1]["lines"][0]
    result = events[-1][1]
    assert result["status"] == "done" and result["thread_id"] == thread_id
    assert "[1]" in result["report"] and result["sources"] and result["usage"]["llm_calls"] > 0
    assert '<a class="cite" href="#source-1">[1]</a>' in result["html"]

    saved = client.get(f"/api/runs/{thread_id}").json()
    assert saved["run"]["status"] == "done" and saved["run"]["question"] == QUESTION
    assert saved["result"]["report"] == result["report"]
    cited = {excerpt["n"] for excerpt in saved["result"]["excerpts"]}
    assert cited == {source["n"] for source in result["sources"]}
    first_excerpt = saved["result"]["excerpts"][0]
    assert first_excerpt["text"] and "/examples/corpus/" in first_excerpt["source"]
    assert [run["thread_id"] for run in client.get("/api/runs").json()] == [thread_id]
    pdf = client.get(f"/api/runs/{thread_id}/report.pdf")
    assert pdf.content.startswith(b"%PDF") and "attachment" in pdf.headers["content-disposition"]
    assert client.get(f"/api/runs/{thread_id}/report.md").text == result["report"]
    assert client.get(f"/api/runs/{thread_id}/report.docx").content.startswith(b"PK")


def test_a_run_made_outside_the_app_on_its_data_folder_is_listed_and_opens(
    client, settings: Settings, deps
):
    from deepsift.api import research

    made = research(QUESTION, settings, deps=deps)  # as `deepsift research` makes one

    listed = client.get("/api/runs").json()
    opened = client.get(f"/api/runs/{made.thread_id}").json()

    assert [(run["thread_id"], run["status"], run["question"]) for run in listed] == [
        (made.thread_id, "done", QUESTION)
    ]
    assert listed[0]["agent"] == "deepsift" and listed[0]["created"] > time.time() - 300
    assert opened["result"]["report"] == made.report and opened["result"]["excerpts"]


def test_a_finished_run_answers_follow_ups_keeps_them_and_exports_each_version(client):
    thread_id = client.post("/api/runs", json={"question": QUESTION}).json()["thread_id"]
    report = run_events(client, thread_id)[-1][1]["report"]

    answered = client.post(
        f"/api/runs/{thread_id}/ask", json={"question": "What did Kestrel Works cost in the end?"}
    )
    rewritten = client.post(f"/api/runs/{thread_id}/ask", json={"question": "shorter, in German"})

    assert answered.status_code == 200, answered.text
    answer = answered.json()
    assert answer["kind"] == "answer" and answer["thread_id"] == thread_id
    cited = [int(n) for n in re.findall(r"\[(\d+)\]", answer["answer"])]
    assert cited and {s["n"] for s in answer["sources"]} == set(cited)
    assert f'<a class="cite" href="#source-{cited[0]}">[{cited[0]}]</a>' in answer["html"]
    assert rewritten.status_code == 200, rewritten.text
    version = rewritten.json()
    assert version["kind"] == "report" and version["version"] == 2
    assert "## Quellen" in version["report"] and version["report"] != report

    saved = client.get(f"/api/runs/{thread_id}").json()["result"]
    assert [(f["question"], f["kind"]) for f in saved["followups"]] == [
        ("What did Kestrel Works cost in the end?", "answer"),
        ("shorter, in German", "report"),
    ]
    assert saved["followups"][0]["html"] == answer["html"]
    sentence = re.sub(r" ?\[\d+\]", "", answer["answer"]).rstrip(".")
    shown = [e["text"] for e in saved["excerpts"] if e["n"] == cited[0]]
    assert any(sentence in text for text in shown)  # the excerpt it cites, under its number

    exported = {
        version: client.get(f"/api/runs/{thread_id}/report.md?version={version}")
        for version in ("1", "2", "3", "0")
    }
    latest = client.get(f"/api/runs/{thread_id}/report.md")
    assert exported["1"].text.startswith(report.rstrip()) and "## Quellen" not in exported["1"].text
    assert exported["2"].text.startswith(version["report"].rstrip())
    assert (
        'filename="deepsift-' + thread_id + '-v2.md"'
        in exported["2"].headers["content-disposition"]
    )
    # Each version's appendix is headed in that version's language.
    for text, heading in (
        (exported["1"].text, "Follow-up questions"),
        (exported["2"].text, "Folgefragen"),
    ):
        assert f"## {heading}" in text and "### What did Kestrel Works cost" in text
    assert latest.text == exported["2"].text
    assert exported["3"].status_code == 404
    assert exported["3"].json() == {"error": f"version 3: run {thread_id} has versions 1 to 2"}
    assert exported["0"].status_code == 400 and "numbered from 1" in exported["0"].json()["error"]


def test_a_follow_up_that_cannot_be_answered_is_refused_in_one_line(client):
    thread_id = client.post("/api/runs", json={"question": QUESTION}).json()["thread_id"]
    running = client.post(f"/api/runs/{thread_id}/ask", json={"question": "What did it cost?"})
    run_events(client, thread_id)

    refused = {
        "unknown": client.post("/api/runs/nosuchthread0/ask", json={"question": "Why?"}),
        "empty": client.post(f"/api/runs/{thread_id}/ask", json={"question": "  "}),
        "long": client.post(f"/api/runs/{thread_id}/ask", json={"question": "why " * 1001}),
        "no JSON": client.post(f"/api/runs/{thread_id}/ask", content=b"why?"),
    }

    assert running.status_code == 409 and "has not finished" in running.json()["error"]
    assert {name: r.status_code for name, r in refused.items()} == {
        "unknown": 404,
        "empty": 400,
        "long": 400,
        "no JSON": 400,
    }
    assert refused["unknown"].json() == {"error": "no run has thread id nosuchthread0"}
    assert refused["empty"].json() == {"error": "the question is empty"}
    assert "question" in refused["long"].json()["error"] and "4000" in refused["long"].text
    assert all("\n" not in r.json()["error"] for r in refused.values())
    assert client.get(f"/api/runs/{thread_id}").json()["result"]["followups"] == []


def test_a_run_that_cannot_start_is_refused_in_one_line(client):
    empty = client.post("/api/runs", json={"question": "  "})
    unknown = client.post("/api/runs", json={"question": QUESTION, "collections": ["nope"]})

    assert empty.status_code == 400 and empty.json()["error"] == "the question is empty"
    assert unknown.status_code == 400 and "no collection named 'nope'" in unknown.json()["error"]
    assert client.get("/api/runs/0123456789ab").status_code == 404


def test_two_runs_at_once_both_finish_the_second_told_its_place_in_the_queue(
    settings: Settings, deps
):
    app = create_app(settings, deps, workers=1)
    with TestClient(app, base_url="http://127.0.0.1:8000") as client:
        first = client.post("/api/runs", json={"question": QUESTION, "length": "brief"})
        second = client.post(
            "/api/runs", json={"question": "What did Kestrel Works cost?", "length": "brief"}
        )
        threads = [first.json()["thread_id"], second.json()["thread_id"]]

        streams = [run_events(client, thread_id) for thread_id in threads]

        listed = {run["thread_id"]: run["status"] for run in client.get("/api/runs").json()}
    assert [events[-1][0] for events in streams] == ["result", "result"]
    assert all(events[-1][1]["report"] for events in streams)
    assert ("queued", {"position": 1}) in streams[1]
    assert streams[1].index(("queued", {"position": 1})) < streams[1].index(
        ("started", {"thread_id": threads[1]})
    )
    assert listed == {threads[0]: "done", threads[1]: "done"}
    index = json.loads((settings.data_dir / INDEX_FILE).read_text())
    assert {row["thread_id"]: row["status"] for row in index} == listed


def test_with_a_token_every_request_without_it_is_refused(settings: Settings, deps):
    app = create_app(settings, deps, token="s3cret")
    with TestClient(app, base_url="http://192.0.2.7:8000") as client:
        refused = [
            client.get("/"),
            client.get("/api/collections"),
            client.get("/static/app.js"),
            client.post("/api/runs", json={"question": QUESTION}),
            client.get("/api/collections", headers={"Authorization": "Bearer wrong"}),
            client.get("/api/collections?token=s3cret"),  # only the printed link takes it so
        ]
        by_header = client.get("/api/collections", headers={"Authorization": "Bearer s3cret"})
        link = client.get("/?token=s3cret", follow_redirects=False)
        client.cookies.update(link.cookies)
        page = client.get("/")
        by_cookie = client.get("/api/collections")

    assert [r.status_code for r in refused] == [401] * 6
    assert "token" in refused[0].json()["error"] and "s3cret" not in refused[0].text
    assert by_header.status_code == 200
    # The link's token moves into an HttpOnly cookie; the URL the page lives at has none.
    assert link.status_code == 303 and link.headers["location"] == "/"
    assert (
        "HttpOnly" in link.headers["set-cookie"] and "SameSite=strict" in link.headers["set-cookie"]
    )
    assert page.status_code == 200 and "s3cret" not in page.text
    assert by_cookie.status_code == 200
    assert {c["name"] for c in by_cookie.json()} == {"science", "operations"}


def test_without_a_token_only_loopback_names_are_answered(settings: Settings, deps):
    app = create_app(settings, deps)
    with TestClient(app, base_url="http://127.0.0.1:8000") as client:
        rebound = client.get("/api/collections", headers={"Host": "attacker.example:8000"})
        foreign = client.post(
            "/api/runs", json={"question": QUESTION}, headers={"Origin": "http://evil.example"}
        )
        local = client.get("/api/collections")

    assert rebound.status_code == 403 and foreign.status_code == 403
    assert local.status_code == 200


def test_every_loopback_address_is_answered(settings: Settings, deps):
    # `serve --host 127.0.0.2` passes the loopback check: its requests are answered too.
    with TestClient(create_app(settings, deps), base_url="http://127.0.0.2:8000") as client:
        assert client.get("/api/collections").status_code == 200


def test_every_answer_carries_the_security_headers(client):
    for response in (client.get("/"), client.get("/api/runs"), client.get("/api/runs/nope")):
        assert response.headers["x-frame-options"] == "DENY"
        assert "frame-ancestors 'none'" in response.headers["content-security-policy"]
        assert "script-src 'self'" in response.headers["content-security-policy"]
        assert response.headers["x-content-type-options"] == "nosniff"


def test_bad_run_requests_are_refused_in_one_line(client):
    refused = [
        client.post("/api/runs", json={"question": ["not", "text"]}),
        client.post("/api/runs", json={"question": "x" * 4_001}),
        client.post("/api/runs", json={"question": QUESTION, "length": "epic"}),
        client.post(
            "/api/runs", content=b"{not json", headers={"Content-Type": "application/json"}
        ),
    ]

    assert [r.status_code for r in refused] == [400] * 4
    errors = [r.json()["error"] for r in refused]
    assert all("\n" not in e for e in errors), errors
    assert errors[0].startswith("a run's JSON: question: ")
    assert "question: String should have at most 4000 characters" in errors[1]
    assert errors[2].startswith("a run's JSON: length: ")
    assert client.get("/api/runs").json() == []


def test_runs_started_at_once_are_queued_up_to_a_bound_and_each_ends(settings: Settings, deps):
    with FakeOpenAI(ScriptedResearcher(), delay=0.2) as slow:
        paced = settings.model_copy(update={"llm_base_url": slow.url})
        app = create_app(paced, deps, workers=1)
        with TestClient(app, base_url="http://127.0.0.1:8000") as client:
            asked = [{"question": f"{QUESTION} ({n})", "length": "brief"} for n in range(23)]
            with ThreadPoolExecutor(23) as pool:  # at once, as 23 tabs would
                answers = list(pool.map(lambda body: client.post("/api/runs", json=body), asked))
            accepted = [a.json()["thread_id"] for a in answers if a.status_code == 202]
            for thread_id in accepted[1:]:  # the waiting ones stop; the first runs to its end
                client.post(f"/api/runs/{thread_id}/cancel")
            ends = [run_events(client, thread_id)[-1][0] for thread_id in accepted]

    codes = sorted(a.status_code for a in answers)
    assert codes == [202] * 21 + [429] * 2, codes  # one running, twenty waiting
    refused = [a.json()["error"] for a in answers if a.status_code == 429]
    assert all("20 runs are waiting already" in error for error in refused)
    assert ends[0] == "result" and set(ends[1:]) == {"stopped"}


def test_a_queued_run_cancelled_stops_at_once_and_frees_its_place(settings: Settings, deps):
    with FakeOpenAI(ScriptedResearcher(), delay=0.2) as slow:
        paced = settings.model_copy(update={"llm_base_url": slow.url})
        app = create_app(paced, deps, workers=1)
        with TestClient(app, base_url="http://127.0.0.1:8000") as client:
            ask = {"question": QUESTION, "length": "brief"}
            first, *waiting = [client.post("/api/runs", json=ask).json() for _ in range(21)]
            refused = client.post("/api/runs", json=ask)
            cancelled = client.post(f"/api/runs/{waiting[0]['thread_id']}/cancel")
            stopped = client.get(f"/api/runs/{waiting[0]['thread_id']}").json()["run"]
            taken = client.post("/api/runs", json=ask)  # the place it left
            for run in waiting[1:] + [taken.json()]:
                client.post(f"/api/runs/{run['thread_id']}/cancel")

    assert refused.status_code == 429
    assert cancelled.json()["status"] == "stopped" and stopped["status"] == "stopped"
    assert taken.status_code == 202


def test_resuming_a_thread_id_no_run_has_is_a_404_and_leaves_no_record(client):
    resumed = client.post("/api/runs", json={"thread_id": "nosuchthread0"})

    assert resumed.status_code == 404
    assert resumed.json() == {"error": "no run has thread id nosuchthread0: nothing to resume"}
    assert client.get("/api/runs").json() == []


def test_a_cancelled_run_stops_says_so_and_resumes_by_its_thread_id(settings: Settings, deps):
    with FakeOpenAI(ScriptedResearcher(), delay=0.2) as slow:
        paced = settings.model_copy(update={"llm_base_url": slow.url, "llm_concurrency": 1})
        app = create_app(paced, deps, workers=1)
        with TestClient(app, base_url="http://127.0.0.1:8000") as client:
            thread_id = client.post("/api/runs", json={"question": QUESTION}).json()["thread_id"]
            with client.stream("GET", f"/api/runs/{thread_id}/events") as stream:
                for line in stream.iter_lines():  # the first step done: the run is under way
                    if line == "event: step":
                        break
            cancelled = client.post(f"/api/runs/{thread_id}/cancel")
            events = run_events(client, thread_id)
            sent = len(slow.requests)
            again = client.post(f"/api/runs/{thread_id}/cancel")
            listed = client.get("/api/runs").json()
            report = client.get(f"/api/runs/{thread_id}/report.md")
            asked = client.post(f"/api/runs/{thread_id}/ask", json={"question": "What cost?"})

            resumed = client.post("/api/runs", json={"thread_id": thread_id})
            finished = run_events(client, thread_id)

    assert cancelled.status_code == 202
    assert events[-1][0] == "stopped" and "start it again" in events[-1][1]["message"]
    assert sent < 8  # a whole run makes more than ten calls
    assert again.status_code == 404
    assert listed[0]["status"] == "stopped" and report.status_code == 404
    assert asked.status_code == 409 and "has not finished: resume it" in asked.json()["error"]
    assert resumed.status_code == 202
    assert finished[-1][0] == "result" and finished[-1][1]["report"]


def test_a_stream_asked_from_past_its_end_closes(client):
    thread_id = client.post("/api/runs", json={"question": QUESTION}).json()["thread_id"]
    events = run_events(client, thread_id)

    for last in (len(events) - 1, len(events) + 5):
        with client.stream(
            "GET", f"/api/runs/{thread_id}/events", headers={"Last-Event-ID": str(last)}
        ) as response:
            assert response.read() == b""


def test_an_unreadable_row_of_the_run_index_costs_that_row_only(settings: Settings, deps):
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    good = {
        "thread_id": "a1",
        "question": "Q?",
        "agent": "deepsift",
        "status": "done",
        "created": 1,
    }
    rows = [good, {"thread_id": "b2", "status": "exploded"}, "not a row"]
    (settings.data_dir / INDEX_FILE).write_text(json.dumps(rows))

    with TestClient(create_app(settings, deps), base_url="http://127.0.0.1:8000") as client:
        listed = client.get("/api/runs").json()

    assert [run["thread_id"] for run in listed] == ["a1"]


def test_serve_refuses_a_host_off_loopback_without_a_token(tmp_path: Path):
    result = run_cli("serve", "--host", "0.0.0.0", "--port", "8765", data=tmp_path / "data")

    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "--token" in result.stderr
    assert "DEEPSIFT_SERVE_TOKEN" in result.stderr


def test_the_other_commands_work_beside_deepsift_serve_on_its_data_folder(tmp_path: Path):
    data = tmp_path / "data"
    for name in ("science", "operations"):
        ingested = run_cli("ingest", str(CORPUS / name), "--collection", name, data=data)
        assert ingested.returncode == 0, ingested.stderr
    port = free_port()
    with FakeOpenAI(ScriptedResearcher()) as llm:
        env = {"DEEPSIFT_LLM_BASE_URL": llm.url, "DEEPSIFT_LLM_API_KEY": "k"}
        environment = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), **env}
        server = subprocess.Popen(
            [sys.executable, "-m", "deepsift", "serve", "--port", str(port)],
            env={**environment, "DEEPSIFT_DATA_DIR": str(data)},
            cwd=tmp_path,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        try:
            _wait_for_port(port, server)
            listed = run_cli("collections", "--json", data=data)
            researched = run_cli("research", QUESTION, "--json", data=data, **env)
            thread_id = json.loads(researched.stdout)["thread_id"]
            asked = run_cli("ask", thread_id, "What did Kestrel Works cost?", data=data, **env)
            dropped = run_cli("collections", "drop", "operations", data=data)
            in_page = httpx.get(f"http://127.0.0.1:{port}/api/runs", timeout=30).json()
            in_app = httpx.get(f"http://127.0.0.1:{port}/api/collections", timeout=30).json()
            second = run_cli("serve", "--port", str(free_port()), data=data)
        finally:
            server.terminate()
            server.wait(60)
            server.stderr.close()
    alone = run_cli("collections", "--json", data=data)

    assert listed.returncode == 0, listed.stderr
    assert sorted(c["name"] for c in json.loads(listed.stdout)) == ["operations", "science"]
    assert researched.returncode == asked.returncode == dropped.returncode == 0, asked.stderr
    assert [run["thread_id"] for run in in_page] == [thread_id]
    assert [c["name"] for c in in_app] == ["science"]  # the app sees what the CLI changed
    assert second.returncode == 2 and second.stderr.count("\n") == 1
    assert f"deepsift serve on http://127.0.0.1:{port}/, pid {server.pid}" in second.stderr
    # Once the app has stopped, the commands open the file themselves again.
    assert [c["name"] for c in json.loads(alone.stdout)] == ["science"], alone.stderr
    assert not list(data.glob("*.server.json"))


def _wait_for_port(port: int, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + 120
    while True:
        try:
            httpx.get(f"http://127.0.0.1:{port}/api/runs", timeout=2)
            return
        except httpx.HTTPError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                pytest.fail(f"deepsift serve did not start: {process.stderr.read()!r}")
            time.sleep(0.5)


def upload(client: TestClient, collection: str, files: list[tuple[str, bytes]]):
    parts = [("files", (name, data, "application/octet-stream")) for name, data in files]
    return client.post(f"/api/collections/{collection}/files?description=notes", files=parts)


@pytest.fixture
def uploads_client(settings: Settings, deps):
    small = settings.model_copy(update={"serve_max_upload_bytes": 5_000})
    with TestClient(create_app(small, deps), base_url="http://127.0.0.1:8000") as client:
        yield client
    if deps.store.exists("uploaded"):
        deps.store.drop("uploaded")  # the sample store is shared by the session's tests


def test_an_upload_of_a_type_ingest_cannot_read_is_refused_and_nothing_is_kept(
    uploads_client, settings: Settings
):
    refused = upload(uploads_client, "uploaded", [("notes.md", b"# A\n"), ("tool.exe", b"MZ")])

    assert refused.status_code == 415
    assert "'tool.exe': files of type .exe cannot be ingested" in refused.json()["error"]
    assert ".md" in refused.json()["error"]
    assert not list((settings.data_dir / "uploads").rglob("*.*"))


def test_an_upload_over_the_size_limit_is_refused_with_the_setting_to_raise(uploads_client):
    refused = upload(uploads_client, "uploaded", [("big.txt", b"x" * 6_000)])

    assert refused.status_code == 413
    assert "serve_max_upload_bytes (5,000)" in refused.json()["error"]


def test_an_allowed_upload_is_ingested_with_progress_and_its_name_cannot_escape(
    uploads_client, settings: Settings, deps, tmp_path: Path
):
    text = b"# Heron Lock\n\nThe Heron Lock was rebuilt in 2021 for 4 million.\n"

    response = upload(uploads_client, "uploaded", [("../../../outside.md", text)])

    assert response.status_code == 200, response.text
    events = sse(response.text)
    assert events[0] == ("start", {"files": 1})
    assert ("file", {"source": "outside.md", "status": "added", "chunks": 1, "error": ""}) in events
    assert events[-1] == (
        "done",
        {"added": 1, "updated": 0, "unchanged": 0, "failed": 0, "chunks": 1},
    )
    kept = settings.data_dir / "uploads" / "uploaded" / "outside.md"
    assert kept.read_bytes() == text
    assert not list(tmp_path.glob("outside.md")) and not list(settings.data_dir.glob("outside.md"))
    assert deps.store.info("uploaded").documents == 1
    listed = {c["name"]: c for c in uploads_client.get("/api/collections").json()}
    assert listed["uploaded"]["description"] == "notes"


@pytest.mark.parametrize(
    ("given", "kept"),
    [
        ("../../etc/passwd.md", "etc/passwd.md"),
        ("..\\..\\windows\\a b.TXT", "windows/a_b.txt"),
        ("/abs/.hidden.md", "abs/hidden.md"),
        ("....md", "upload.md"),
        ("über straße.pdf", "ber_stra_e.pdf"),
        ("a\x00b.md", "a_b.md"),
        ("docs/./../sub//README.md", "docs/sub/README.md"),
        ("/".join("abcdefghij") + "/x.md", "c/d/e/f/g/h/i/j/x.md"),
    ],
)
def test_upload_paths_stay_relative_and_plain(given: str, kept: str):
    assert safe_path(given) == kept


def test_two_files_of_one_name_in_different_folders_stay_two_documents(uploads_client, deps):
    readmes = [
        ("docs/README.md", b"# Docs\n\nThe docs.\n"),
        ("docs/sub/README.md", b"# Sub\n\nThe sub.\n"),
    ]

    response = upload(uploads_client, "uploaded", readmes)

    assert response.status_code == 200, response.text
    files = {data["source"]: data["status"] for name, data in sse(response.text) if name == "file"}
    assert files == {"docs/README.md": "added", "docs/sub/README.md": "added"}
    assert deps.store.info("uploaded").documents == 2


def test_an_upload_never_replaces_a_file_silently(uploads_client, deps, settings: Settings):
    first = upload(uploads_client, "uploaded", [("report.md", b"# Q1\n\nSales rose.\n")])
    assert first.status_code == 200

    clash = upload(uploads_client, "uploaded", [("a/x.md", b"one"), ("a/x.md", b"two")])
    other = upload(uploads_client, "uploaded", [("report.md", b"# Q2\n\nSales fell.\n")])
    same = upload(uploads_client, "uploaded", [("report.md", b"# Q1\n\nSales rose.\n")])

    assert clash.status_code == 409 and "'a/x.md'" in clash.json()["error"]
    assert other.status_code == 409 and "replace" in other.json()["error"]
    kept = settings.data_dir / "uploads" / "uploaded" / "report.md"
    assert kept.read_bytes() == b"# Q1\n\nSales rose.\n"
    assert not (settings.data_dir / "uploads" / "uploaded" / "a").exists()
    assert ("file", {"source": "report.md", "status": "unchanged", "chunks": 0, "error": ""}) in (
        sse(same.text)
    )

    replaced = uploads_client.post(
        "/api/collections/uploaded/files?replace=true",
        files=[("files", ("report.md", b"# Q2\n\nSales fell.\n", "text/markdown"))],
    )
    assert ("file", {"source": "report.md", "status": "updated", "chunks": 1, "error": ""}) in (
        sse(replaced.text)
    )


def test_an_upload_keeps_a_collection_s_description_unless_asked_to_replace_it(
    uploads_client, deps
):
    def send(name: str, query: str):
        parts = [("files", (name, b"# Notes\n\nSales rose.\n", "text/markdown"))]
        return uploads_client.post(f"/api/collections/uploaded/files?{query}", files=parts)

    first = send("a.md", "description=sales notes")
    kept = send("b.md", "description=something else")
    kept_description = deps.store.description("uploaded")
    replaced = send("c.md", "description=quarterly sales&replace_description=true")

    assert ("kept", {"description": "sales notes"}) not in sse(first.text)
    assert ("kept", {"description": "sales notes"}) in sse(kept.text)
    assert kept_description == "sales notes"
    assert "kept" not in [name for name, _ in sse(replaced.text)]
    assert deps.store.description("uploaded") == "quarterly sales"


def test_the_upload_form_s_checkboxes_sit_beside_their_labels():
    static = Path(deepsift.serve.__file__).parent / "static"
    page = (static / "index.html").read_text()
    css = (static / "app.css").read_text()

    boxes = re.findall(r"<label([^>]*)><input id=\"([^\"]+)\" type=\"checkbox\">", page)
    assert {box for _, box in boxes} >= {"replace", "replace-description"}
    assert all('class="check"' in attributes for attributes, _ in boxes)
    # The form's inputs are full width; a checkbox so wide pushes its label to the next line.
    assert "#upload-form input { width: 100%; }" in css
    assert "#upload-form label.check { display: flex;" in css
    assert "#upload-form label.check input { width: auto;" in css


@pytest.mark.parametrize(
    "uploads, clash",
    [
        ([[("node.md", b"# Node\n")], [("node.md/child.md", b"# Child\n")]], "'node.md' is a file"),
        ([[("node.md/child.md", b"# Child\n")], [("node.md", b"# Node\n")]], "is a folder"),
        ([[("both.md", b"# Both\n"), ("both.md/x.md", b"# X\n")]], "a folder of that name"),
    ],
    ids=["file-then-folder", "folder-then-file", "both-at-once"],
)
def test_a_file_and_a_folder_of_one_name_are_refused_before_anything_is_written(
    uploads_client, settings: Settings, uploads, clash
):
    *earlier, last = uploads
    for files in earlier:
        assert upload(uploads_client, "uploaded", files).status_code == 200

    def files() -> list[Path]:
        return sorted(p for p in (settings.data_dir / "uploads").rglob("*") if p.is_file())

    kept = files()

    refused = uploads_client.post(
        "/api/collections/uploaded/files?replace=true",
        files=[("files", (name, data, "text/markdown")) for name, data in last],
    )

    assert refused.status_code == 409 and clash in refused.json()["error"]
    assert refused.headers["X-Content-Type-Options"] == "nosniff"
    assert files() == kept  # nothing written


def test_unknown_routes_wrong_methods_and_failures_are_json_lines_with_the_headers(
    settings: Settings, deps
):
    app = create_app(settings, deps)

    def fail(request):
        raise RuntimeError("a bug")

    app.router.routes.append(Route("/api/fail", fail))
    with TestClient(app, base_url="http://127.0.0.1:8000", raise_server_exceptions=False) as client:
        answers = [client.get("/nope"), client.delete("/api/runs"), client.get("/api/fail")]

    assert [a.status_code for a in answers] == [404, 405, 500]
    assert answers[0].json() == {"error": "nothing at /nope: the API is under /api/"}
    assert answers[1].json() == {
        "error": "DELETE is not accepted at /api/runs; use GET, HEAD, POST"
    }
    assert "RuntimeError" in answers[2].json()["error"]
    assert all(a.headers["Content-Security-Policy"].startswith("default-src") for a in answers)


def test_a_form_the_server_cannot_take_is_refused_in_one_json_line(uploads_client):
    many = [(f"n{i}.md", b"x") for i in range(201)]

    refused = upload(uploads_client, "uploaded", many)

    assert refused.status_code == 400
    assert refused.json()["error"].startswith("the upload's form was refused: ")
    assert "200" in refused.json()["error"] and "\n" not in refused.json()["error"]


def test_a_run_whose_endpoint_fails_ends_its_stream_with_a_one_line_error(
    tmp_path: Path, sample_store
):
    from deepsift.deps import Deps
    from deepsift.llm.chat import chat_model
    from deepsift.llm.embedders import get_embedder

    with FakeOpenAI(ScriptedResearcher(), dies_at=lambda body: True) as dead:
        settings = Settings(
            data_dir=tmp_path / "data", llm_base_url=dead.url, llm_api_key="t", llm_retries=0
        )
        deps = Deps(settings, sample_store, get_embedder(settings), chat_model(settings))
        with TestClient(create_app(settings, deps), base_url="http://127.0.0.1:8000") as client:
            thread_id = client.post("/api/runs", json={"question": QUESTION}).json()["thread_id"]
            events = run_events(client, thread_id)
            listed = client.get("/api/runs").json()

    name, data = events[-1]
    assert name == "error" and "\n" not in data["message"]
    assert dead.url.removesuffix("/v1") in data["message"] and thread_id in data["message"]
    assert listed[0]["status"] == "failed" and listed[0]["error"] == data["message"]


def test_serve_token_alone_makes_a_new_one_that_ps_never_shows(tmp_path: Path):
    port = free_port()
    data = tmp_path / "data"
    process = subprocess.Popen(
        [sys.executable, "-m", "deepsift", "serve", "--token", "--port", str(port)],
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "DEEPSIFT_DATA_DIR": str(data)},
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        printed = process.stderr.readline()
        token = re.search(r"\?token=(\S+)", printed)[1]
        command_line = Path(f"/proc/{process.pid}/cmdline").read_bytes().decode()
        answers = []
        for headers in ({}, {"Authorization": f"Bearer {token}"}):
            for _ in range(100):  # until it listens
                try:
                    url = f"http://127.0.0.1:{port}/api/runs"
                    answers.append(httpx.get(url, headers=headers, timeout=2).status_code)
                    break
                except httpx.TransportError:
                    time.sleep(0.1)
    finally:
        process.terminate()
        process.wait(timeout=30)

    assert len(token) >= 20 and token not in command_line
    assert answers == [401, 200]
