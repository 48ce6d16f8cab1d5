"""The web app in a real headless browser: `deepsift serve` on a free loopback port against the
scripted endpoint, driven through its page by Debian's Chromium (never a downloaded browser)."""

import io
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import docx
import httpx
import pytest

from deepsift.llm.local_model import free_port

from conftest import run_cli
from fake_openai import FakeOpenAI
from scripted import ScriptedResearcher

CHROMIUM = Path("/usr/bin/chromium")
# Where the test keeps its picture of the page, to look at when it fails (the docs' picture is
# docs/screenshot.py's, from a run of the sample corpus): DEEPSIFT_SCREENSHOT=/tmp/page.png
SCREENSHOT = os.environ.get("DEEPSIFT_SCREENSHOT")
pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(),
    reason="needs Chromium at /usr/bin/chromium (apt-get install chromium; .ci/run installs it)",
)

NOTES = {
    "kestrel.md": "# Kestrel Works\n\nKestrel Works was built in 2021 to remove phosphorus from "
    "the River Orrin before it reaches Lake Veldmere. Its approved budget was 41 million euros; "
    "it cost 47 million in the end, after a peat-filled river channel delayed it by 24 weeks.\n",
    "lake.md": "# Lake Veldmere\n\nAfter Kestrel Works opened, total phosphorus in Lake "
    "Veldmere fell from 92 to 61 micrograms per litre between 2022 and 2025, and blue-green "
    "algae blooms became shorter.\n",
    # A hostile document: its title and text carry markup that must stay text everywhere.
    "notes/hostile.md": '# Kestrel <img src=x onerror="window.pwned=1"> notes\n\nKestrel Works '
    "minutes <script>window.pwned=2</script> say the Orrin plant cost 47 million euros "
    '<a href="javascript:window.pwned=3" onclick="window.pwned=4">here</a>.\n',
}
TOKEN = "t0k3n-for-the-browser-test"


@pytest.fixture
def server(tmp_path: Path):
    """`deepsift serve` on a free loopback port behind a token (given by environment, never on
    its command line), its model the scripted endpoint, a little slow so a run can be
    cancelled. Yields the page's address and the server's log."""
    port = free_port()
    log = tmp_path / "serve.log"
    with FakeOpenAI(ScriptedResearcher(), delay=0.1) as llm, log.open("w") as errors:
        environment = {
            "PATH": "/usr/bin:/bin",
            "HOME": str(tmp_path),
            "DEEPSIFT_DATA_DIR": str(tmp_path / "data"),
            "DEEPSIFT_LLM_BASE_URL": llm.url,
            "DEEPSIFT_LLM_API_KEY": "test",
            "DEEPSIFT_LLM_CONCURRENCY": "1",
            "DEEPSIFT_SERVE_TOKEN": TOKEN,
        }
        process = subprocess.Popen(
            [sys.executable, "-m", "deepsift", "serve", "--port", str(port)],
            env=environment,
            cwd=tmp_path,
            stdout=subprocess.DEVNULL,
            stderr=errors,
            text=True,
        )
        url = f"http://127.0.0.1:{port}/"
        try:
            _wait_until_up(url, process, log)
            yield url, log
        finally:
            process.terminate()
            process.wait(timeout=30)


def _wait_until_up(url: str, process: subprocess.Popen, log: Path, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"deepsift serve exited: {log.read_text()}")
        try:
            headers = {"Authorization": f"Bearer {TOKEN}"}
            if httpx.get(url + "api/runs", headers=headers, timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise AssertionError(f"deepsift serve did not answer at {url} within {seconds} s")


def test_a_user_s_whole_path_through_the_page(server, tmp_path: Path):
    """Upload a folder's files, run, watch the steps, open a citation, download all four
    formats, reload and find the run, cancel a run and resume it; a hostile document's markup
    never runs; the token never appears in a URL the page uses."""
    from playwright.sync_api import expect, sync_playwright

    url, log = server
    folder = tmp_path / "upload"
    for name, text in NOTES.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=["--no-sandbox"]
        )
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900}, accept_downloads=True)
            asked = []
            page.on("request", lambda request: asked.append(request.url))
            page.goto(f"{url}?token={TOKEN}")  # the link deepsift serve prints
            assert TOKEN not in page.url

            page.fill("#collection", "lake")
            page.fill("#description", "Lake Veldmere and the Kestrel Works plant")
            page.set_input_files("#folder", str(folder))
            page.click("#upload-form button")
            expect(page.locator("#upload-log")).to_contain_text("done: 3 added", timeout=30_000)
            expect(page.locator("#upload-log")).to_contain_text("notes/hostile.md: added")
            expect(page.locator("#sources input[value=lake]")).to_be_checked()

            page.fill("#question", "Why was Kestrel Works built, and did it help Lake Veldmere?")
            page.select_option("#length", "brief")
            page.click("#run")
            expect(page.locator("#steps li")).not_to_have_count(0, timeout=30_000)
            page.wait_for_function("document.querySelectorAll('#steps li').length >= 3")
            expect(page.locator("#report a.cite").first).to_be_visible(timeout=60_000)
            steps = page.locator("#steps li").all_inner_texts()
            assert steps[0].startswith("sub-queries") and any(s.startswith("route") for s in steps)
            assert any(s.startswith("report written") for s in steps)

            opened: set[str] = set()  # each number once: a second click closes its excerpt
            for link in page.locator("#report a.cite").all():
                if link.inner_text() not in opened:
                    opened.add(link.inner_text())
                    link.click()
            expect(page.locator(".excerpt").first).to_be_visible()  # opened after a fetch
            excerpts = " ".join(page.locator(".excerpt").all_inner_texts())
            assert "Kestrel Works" in excerpts or "Veldmere" in excerpts
            expect(page.locator(".excerpt .dim").first).to_contain_text("passage")
            screenshot = Path(SCREENSHOT) if SCREENSHOT else tmp_path / "serve.png"
            page.screenshot(path=str(screenshot), full_page=True)

            downloads = {}
            for fmt in ("md", "html", "pdf", "docx"):
                with page.expect_download() as download:
                    page.click(f"#exports a[data-format={fmt}]")
                downloads[fmt] = Path(download.value.path()).read_bytes()
            # The HTML export, opened as a page: the document's markup is text there too.
            exported = browser.new_page()
            exported.set_content(downloads["html"].decode())
            assert exported.evaluate("window.pwned") is None
            exported.close()

            page.reload()
            expect(page.locator("#runs li")).to_have_count(1)
            assert page.locator("#length").input_value() == "brief"  # kept across the reload
            page.locator("#runs li").first.click()
            expect(page.locator("#report a.cite").first).to_be_visible()

            page.fill("#question", "What did Kestrel Works cost?")
            page.click("#run")
            page.click("#cancel")
            expect(page.locator("#status")).to_contain_text("stopped", timeout=30_000)
            expect(page.locator("#exports")).to_be_hidden()
            page.click("#resume")
            expect(page.locator("#status")).to_contain_text("done", timeout=60_000)
            expect(page.locator("#exports")).to_be_visible()
            assert page.evaluate("window.pwned") is None
        finally:
            browser.close()

    assert downloads["md"].decode().count("## Sources") == 1
    assert downloads["html"].startswith(b"<!DOCTYPE html>") and b"<script>" not in downloads["html"]
    assert downloads["pdf"].startswith(b"%PDF") and downloads["docx"].startswith(b"PK")
    assert docx.Document(io.BytesIO(downloads["docx"])).paragraphs
    assert os.path.getsize(screenshot) > 10_000
    assert not [address for address in asked if TOKEN in address][1:]  # only the link itself
    assert TOKEN not in log.read_text().replace(f"?token={TOKEN}", "")


def test_follow_ups_asked_in_the_page_are_kept_and_their_citations_open_excerpts(server):
    """Research in the page, ask a question and have the report rewritten in the box under
    it; after a reload both are listed, the answer's citation opens the excerpt it cites, and
    the rewrite is version 2 of the report, shown on asking."""
    from playwright.sync_api import expect, sync_playwright

    url, _ = server
    headers = {"Authorization": f"Bearer {TOKEN}"}
    files = [("files", (name, text.encode(), "text/markdown")) for name, text in NOTES.items()]
    # The upload streams its progress; the first event waits for the embedding model to load,
    # which takes longer than httpx's 5 s default on a busy 2-core machine.
    uploaded = httpx.post(
        url + "api/collections/lake/files?description=lake",
        files=files,
        headers=headers,
        timeout=120,
    )
    assert "event: done" in uploaded.text, uploaded.text
    question = "What did Kestrel Works cost in the end?"

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=["--no-sandbox"]
        )
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(f"{url}?token={TOKEN}")
            page.fill("#question", "Why was Kestrel Works built, and did it help Lake Veldmere?")
            page.select_option("#length", "brief")
            page.click("#run")
            expect(page.locator("#report a.cite").first).to_be_visible(timeout=60_000)
            expect(page.locator("#versions")).to_be_hidden()

            page.fill("#followup", question)
            page.click("#ask-followup")
            expect(page.locator("#ask-followup")).to_be_disabled()
            expect(page.locator("#followup-list li")).to_have_count(1, timeout=60_000)
            page.fill("#followup", "shorter, in German")
            page.click("#ask-followup")
            expect(page.locator("#followup-list li")).to_have_count(2, timeout=60_000)
            expect(page.locator("#report")).to_contain_text("Quellen")  # the new version shown
            expect(page.locator("#version")).to_have_value("2")

            page.reload()
            page.locator("#runs li").first.click()
            entries = page.locator("#followup-list > li")
            expect(entries).to_have_count(2)
            expect(entries.nth(0).locator("h3")).to_have_text(question)
            expect(entries.nth(1).locator("h3")).to_have_text("shorter, in German")
            expect(entries.nth(1)).to_contain_text("Version 2 of the report")
            expect(page.locator("#report")).not_to_contain_text("Quellen")  # version 1 first
            mark = entries.nth(0).locator(".answer a.cite").first
            n = int(mark.inner_text().strip("[]"))
            mark.click()
            shown = entries.nth(0).locator(".excerpt blockquote").first
            expect(shown).to_be_visible()
            shown_text = shown.inner_text()
            assert page.evaluate("window.pwned") is None
            thread_id = page.locator("#runs li").first.get_attribute("data-thread")
        finally:
            browser.close()

    saved = httpx.get(f"{url}api/runs/{thread_id}", headers=headers, timeout=30).json()["result"]
    cited = [e["text"] for e in saved["excerpts"] if e["n"] == n]
    assert cited and shown_text.strip() == cited[0].strip()
    answer = saved["followups"][0]["answer"]
    assert re.sub(r" ?\[\d+\]", "", answer).rstrip(".") in shown_text


def test_a_run_made_from_the_command_line_beside_the_server_is_listed_and_has_an_address(
    server, tmp_path: Path
):
    """While `deepsift serve` runs, the CLI in another process ingests and researches on the
    same data folder; the run is in the page's list, and opens by its own address, after a
    reload too."""
    from playwright.sync_api import expect, sync_playwright

    url, _ = server
    folder = tmp_path / "notes"
    folder.mkdir()
    for name in ("kestrel.md", "lake.md"):
        (folder / name).write_text(NOTES[name], encoding="utf-8")
    question = "Why was Kestrel Works built, and did it help Lake Veldmere?"
    with FakeOpenAI(ScriptedResearcher()) as llm:
        env = {"DEEPSIFT_LLM_BASE_URL": llm.url, "DEEPSIFT_LLM_API_KEY": "test"}
        data = tmp_path / "data"
        ingested = run_cli("ingest", str(folder), "--collection", "lake", data=data)
        researched = run_cli("research", question, "--json", data=data, **env)
    assert ingested.returncode == 0, ingested.stderr
    assert researched.returncode == 0, researched.stderr
    thread_id = json.loads(researched.stdout)["thread_id"]

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=["--no-sandbox"]
        )
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            page = context.new_page()
            page.goto(f"{url}?token={TOKEN}")
            expect(page.locator("#runs li")).to_have_count(1)
            expect(page.locator("#runs li").first).to_contain_text(question)
            page.locator("#runs li a").first.click()
            expect(page.locator("#report a.cite").first).to_be_visible()
            assert page.url.endswith(f"#run={thread_id}")

            page.reload()
            expect(page.locator("#report a.cite").first).to_be_visible()
            assert page.locator("#question").input_value() == question

            shared = context.new_page()  # the address given to another tab
            shared.goto(f"{url}#run={thread_id}")
            expect(shared.locator("#report a.cite").first).to_be_visible()
        finally:
            browser.close()
