"""Takes docs/serve.png, the web app's picture: the sample corpus ingested and researched from
the command line (the demo's question), then `deepsift serve` opened in Debian's headless
Chromium at that run's address, with the excerpt a key finding cites opened. The tests'
scripted model stands in for the LLM (its sentences are the documents' own), so the picture
needs no model download.

    python docs/screenshot.py      # needs /usr/bin/chromium and the dev extra (playwright)
"""

import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from deepsift.llm.local_model import free_port  # noqa: E402

from fake_openai import FakeOpenAI  # noqa: E402
from scripted import ScriptedResearcher  # noqa: E402

QUESTION = (
    "Why was the Kestrel Works treatment plant built, how much did it cost in the end compared "
    "with its approved budget, and did it reduce phosphorus levels in Lake Veldmere?"
)
COLLECTIONS = {
    "science": "Science and monitoring of Lake Veldmere: water-quality data, the Kestrel Works "
    "plant design, buffer-strip trials, sediment studies, the monitoring network and its staff",
    "operations": "Operations of the Lake Veldmere Water Authority: board minutes and budgets, "
    "contracts and costs, incident reports, press releases",
}
TOKEN = "screenshot"


class DocumentsOwnWords(ScriptedResearcher):
    """The scripted researcher, restating nothing: each section is its documents' sentences."""

    def __call__(self, body: dict) -> object:
        reply = super().__call__(body)
        if isinstance(reply, dict) and "sentences" in reply and "answer" in reply:
            return {"answer": reply["answer"], "sentences": []}
        return reply


def deepsift(*args: str, env: dict[str, str], cwd: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "deepsift", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def main() -> None:
    from playwright.sync_api import expect, sync_playwright

    folder = Path(tempfile.mkdtemp(prefix="deepsift-screenshot-"))
    with FakeOpenAI(DocumentsOwnWords(title="Kestrel Works: purpose, cost and effect")) as llm:
        env = {
            "PATH": "/usr/bin:/bin",
            "HOME": str(folder),
            "DEEPSIFT_DATA_DIR": str(folder / "data"),
            "DEEPSIFT_LLM_BASE_URL": llm.url,
            "DEEPSIFT_LLM_API_KEY": "scripted",
            "DEEPSIFT_SERVE_TOKEN": TOKEN,
        }
        for name, description in COLLECTIONS.items():
            corpus = shutil.copytree(ROOT / "examples" / "corpus" / name, folder / "lake" / name)
            deepsift("ingest", str(corpus), "--collection", name, "--description", description,
                     env=env, cwd=folder)  # fmt: skip
        run = json.loads(deepsift("research", QUESTION, "--json", env=env, cwd=folder))
        port = free_port()
        server = subprocess.Popen(
            [sys.executable, "-m", "deepsift", "serve", "--port", str(port)],
            env=env,
            cwd=folder,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        url = f"http://127.0.0.1:{port}/"
        try:
            for _ in range(300):
                try:
                    httpx.get(url, timeout=1)
                    break
                except httpx.TransportError:
                    time.sleep(0.2)
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(
                    executable_path="/usr/bin/chromium", headless=True, args=["--no-sandbox"]
                )
                page = browser.new_page(viewport={"width": 1280, "height": 1000})
                page.goto(f"{url}?token={TOKEN}")
                page.locator(f"#runs a[href='#run={run['thread_id']}']").click()
                findings = page.locator("#report ul").first  # the last key finding's excerpt
                expect(findings.locator("a.cite").last).to_be_visible(timeout=60_000)
                findings.locator("a.cite").last.click()
                expect(page.locator(".excerpt").first).to_be_visible()
                page.screenshot(
                    path=str(Path(__file__).parent / "serve.png"),
                    full_page=True,
                    clip={"x": 0, "y": 0, "width": 1280, "height": 1400},
                )
                browser.close()
        finally:
            server.terminate()
            server.wait(30)
            shutil.rmtree(folder)


if __name__ == "__main__":
    main()
