"""`deepsift ingest URL...` and `--urls FILE`: pages and PDFs from a loopback site, stored with
their URL as source, through the guarded fetcher (private hosts allowed for the test)."""

import re

import pytest

from deepsift.api import research
from deepsift.config import Settings

from conftest import CORPUS, run_cli
from fake_openai import FakeOpenAI
from fake_web import FileSite
from scripted import ScriptedResearcher

FERRY = "The Orrin ferry carried 41,200 passengers in 2024, its busiest year since 1998."
PDF = CORPUS / "science" / "kestrel_works_design_basis.pdf"
ALLOW = {"DEEPSIFT_WEB_ALLOW_PRIVATE_HOSTS": "true"}


def _html(sentence: str, banner: str = "") -> tuple[str, bytes]:
    page = (
        f"<html><head><title>Orrin ferry</title></head><body><nav>{banner}Home</nav><article>"
        f"<h1>Orrin ferry</h1><p>{sentence}</p><p>The crossing takes twelve minutes.</p>"
        "</article></body></html>"
    )
    return "text/html; charset=utf-8", page.encode()


@pytest.fixture
def site():
    files = {"/a.html": _html(FERRY), "/b.pdf": ("application/pdf", PDF.read_bytes())}
    with FileSite(files) as server:
        yield server


def _counts(stderr: str) -> dict[str, int]:
    """The summary table's counts."""
    row = [line for line in stderr.splitlines() if line.startswith("│")][-1]
    cells = [int(float(c)) for c in row.strip("│").split("│")]
    names = ["added", "updated", "unchanged", "pruned", "failed", "chunks", "seconds"]
    return dict(zip(names, cells, strict=True))


def test_pages_and_pdfs_by_url_are_stored_cited_by_url_and_a_rerun_adds_nothing(tmp_path, site):
    data = tmp_path / "data"
    a, b = f"{site.url}/a.html", f"{site.url}/b.pdf"
    unreachable = "http://127.0.0.1:9/gone.html"  # the discard port: nothing listens

    done = run_cli("ingest", a, b, unreachable, "--collection", "w", data=data, **ALLOW)

    assert done.returncode == 0, done.stderr
    skipped = [line for line in done.stderr.splitlines() if "skipped" in line]
    assert len(skipped) == 1 and unreachable in skipped[0], done.stderr
    counts = _counts(done.stderr)
    assert (counts["added"], counts["failed"], counts["unchanged"]) == (2, 1, 0)
    assert counts["chunks"] >= 2
    again = run_cli("ingest", a, b, "--collection", "w", data=data, **ALLOW)
    assert _counts(again.stderr)["unchanged"] == 2 and _counts(again.stderr)["chunks"] == 0

    queries = ["Orrin ferry passengers in 2024", "Kestrel Works design basis"]
    with FakeOpenAI(ScriptedResearcher(sub_queries=queries)) as llm:
        settings = Settings(data_dir=data, llm_base_url=llm.url, llm_api_key="t", store_wait=30)
        result = research(
            "How many passengers did the Orrin ferry carry, and why was Kestrel Works built?",
            settings,
            collections=["w"],
            max_iterations=1,
        )
    cited = {s.source: s.title for s in result.sources}
    assert cited == {a: "Orrin ferry", b: "Kestrel Works - Design Basis Note"}, cited
    assert re.search(rf"\[\d+\] Orrin ferry — `{re.escape(a)}`", result.report)


def test_a_changed_page_is_replaced_a_new_banner_is_not_and_prune_drops_unlisted_urls(
    tmp_path, site
):
    data = tmp_path / "data"
    a, b = f"{site.url}/a.html", f"{site.url}/b.pdf"
    listed = tmp_path / "urls.txt"
    listed.write_text(f"# the ferry and the design basis\n{a}\n\n{b}\n")
    first = run_cli("ingest", "--urls", str(listed), "--collection", "w", data=data, **ALLOW)
    assert _counts(first.stderr)["added"] == 2, first.stderr

    site.files["/a.html"] = _html(FERRY, banner="Sale today! ")  # markup, not the article
    unchanged = run_cli("ingest", "--urls", str(listed), "--collection", "w", data=data, **ALLOW)
    assert _counts(unchanged.stderr)["unchanged"] == 2, unchanged.stderr

    site.files["/a.html"] = _html(FERRY.replace("41,200", "43,900"))
    changed = run_cli("ingest", "--urls", str(listed), "--collection", "w", data=data, **ALLOW)
    assert _counts(changed.stderr)["updated"] == 1, changed.stderr

    listed.write_text(f"{a}\n")
    pruning = run_cli(
        "ingest", "--urls", str(listed), "--collection", "w", "--prune", data=data, **ALLOW
    )
    assert _counts(pruning.stderr)["pruned"] == 1, pruning.stderr
    documents = run_cli("collections", "--json", data=data)
    assert '"documents": 1' in documents.stdout, documents.stdout


def test_a_bad_url_file_line_is_one_line_naming_it(tmp_path):
    listed = tmp_path / "urls.txt"
    listed.write_text("https://example.org/a\nftp://example.org/b\n")

    done = run_cli("ingest", "--urls", str(listed), "--collection", "w", data=tmp_path / "d")

    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"error: --urls {listed}, line 2: 'ftp://example.org/b' is not an http(s) URL"
    ]
