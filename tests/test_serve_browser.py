"""The web app in a real headless browser: `deepsift serve` on a free loopback port against the
scripted endpoint, driven through its page by Debian's Chromium (never a downloaded browser)."""

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from fake_openai import FakeOpenAI
from scripted import ScriptedResearcher

CHROMIUM = Path("/usr/bin/chromium")
# The README's picture of the web app; the test writes it only when asked, so a test run leaves
# the checkout as it was: DEEPSIFT_SCREENSHOT=docs/serve.png pytest tests/test_serve_browser.py
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
}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def server(tmp_path: Path):
    """`deepsift serve` on a free loopback port, its model the scripted endpoint."""
    port = free_port()
    with FakeOpenAI(ScriptedResearcher()) as llm:
        environment = {
            "PATH": "/usr/bin:/bin",
            "HOME": str(tmp_path),
            "DEEPSIFT_DATA_DIR": str(tmp_path / "data"),
            "DEEPSIFT_LLM_BASE_URL": llm.url,
            "DEEPSIFT_LLM_API_KEY": "test",
        }
        process = subprocess.Popen(
            [sys.executable, "-m", "deepsift", "serve", "--port", str(port)],
            env=environment,
            cwd=tmp_path,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        url = f"http://127.0.0.1:{port}/"
        try:
            _wait_until_up(url, process)
            yield url
        finally:
            process.terminate()
            process.wait(timeout=30)


def _wait_until_up(url: str, process: subprocess.Popen, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"deepsift serve exited: {process.stderr.read()}")
        try:
            if httpx.get(url, timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise AssertionError(f"deepsift serve did not answer at {url} within {seconds} s")


def test_the_page_uploads_runs_shows_steps_opens_a_citation_and_downloads_the_pdf(
    server: str, tmp_path: Path
):
    from playwright.sync_api import expect, sync_playwright

    files = []
    for name, text in NOTES.items():
        files.append(tmp_path / name)
        files[-1].write_text(text, encoding="utf-8")

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=["--no-sandbox"]
        )
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900}, accept_downloads=True)
            page.goto(server)

            page.fill("#collection", "lake")
            page.fill("#description", "Lake Veldmere and the Kestrel Works plant")
            page.set_input_files("#files", [str(path) for path in files])
            page.click("#upload-form button")
            expect(page.locator("#upload-log")).to_contain_text("done: 2 added", timeout=30_000)
            expect(page.locator("#sources input[value=lake]")).to_be_checked()

            page.fill("#question", "Why was Kestrel Works built, and did it help Lake Veldmere?")
            page.select_option("#length", "brief")
            page.click("#run")
            expect(page.locator("#steps li")).not_to_have_count(0, timeout=30_000)
            page.wait_for_function("document.querySelectorAll('#steps li').length >= 3")
            expect(page.locator("#report a.cite").first).to_be_visible(timeout=30_000)
            steps = page.locator("#steps li").all_inner_texts()
            assert steps[0].startswith("sub-queries") and any(s.startswith("route") for s in steps)
            assert any(s.startswith("report written") for s in steps)

            page.locator("#report a.cite").first.click()
            excerpt = page.locator(".excerpt blockquote").first
            expect(excerpt).to_be_visible()
            assert "Kestrel Works" in excerpt.inner_text() or "Veldmere" in excerpt.inner_text()
            expect(page.locator(".excerpt .dim").first).to_contain_text("passage")
            expect(page.locator("#runs li")).to_have_count(1)
            screenshot = Path(SCREENSHOT) if SCREENSHOT else tmp_path / "serve.png"
            page.screenshot(path=str(screenshot), full_page=True)

            with page.expect_download() as download:
                page.click("#exports a[data-format=pdf]")
            pdf = Path(download.value.path()).read_bytes()
        finally:
            browser.close()

    assert pdf.startswith(b"%PDF")
    assert os.path.getsize(screenshot) > 10_000
