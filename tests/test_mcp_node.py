"""`deepsift mcp` through the official TypeScript SDK client (@modelcontextprotocol/sdk, Client +
StdioClientTransport, from npm): what assistants built on it see. Needs Node and npm (.ci/run
installs them); skips and says why without them."""

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fake_openai import FakeOpenAI
from scripted import ScriptedResearcher

CLIENT = Path(__file__).parent / "mcp_node"
QUESTION = "Why was Kestrel Works built and what did it cost?"
FOLLOW_UP = "What was the final cost of Kestrel Works against its approved budget?"
pytestmark = pytest.mark.skipif(
    not (shutil.which("node") and shutil.which("npm")),
    reason="needs Node and npm (apt-get install nodejs npm; .ci/run installs them)",
)


@pytest.fixture(scope="session")
def sdk() -> Path:
    """The client's folder with the SDK installed from its lock file (once per checkout)."""
    if not (CLIENT / "node_modules" / "@modelcontextprotocol" / "sdk").is_dir():
        installed = subprocess.run(
            ["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=CLIENT,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert installed.returncode == 0, f"npm ci failed: {installed.stderr[-2000:]}"
    return CLIENT


def test_the_typescript_sdk_client_ingests_researches_asks_rereads_and_gets_one_line_errors(
    sdk: Path, tmp_path: Path
):
    shared, private = tmp_path / "shared", tmp_path / "private"
    shared.mkdir()
    private.mkdir()
    (shared / "kestrel.md").write_text(
        "# Kestrel Works\n\nKestrel Works was built in 2021 to remove phosphorus from the River "
        "Orrin. Its approved budget was 41 million euros; it cost 47 million in the end.\n"
    )
    (shared / "lake.md").write_text(
        "# Lake Veldmere\n\nTotal phosphorus in Lake Veldmere fell from 92 to 61 micrograms per "
        "litre between 2022 and 2025.\n"
    )
    (private / "secret.md").write_text("# Secret\n\nThe safe's code is 4711.\n")
    bad = [
        ["research", {"question": 5}],
        ["research", {"question": QUESTION, "length": "epic"}],
        ["research", {"question": QUESTION, "sources": "notes"}],
        ["ingest", {"paths": str(shared), "collection": "notes"}],
        ["ingest", {"paths": [str(shared)], "collection": "9 lives"}],
        ["get_report", {"thread_id": 42}],
        ["get_report", {}],
        ["ask", {"thread_id": "0123456789ab", "question": FOLLOW_UP}],
    ]
    with FakeOpenAI(ScriptedResearcher()) as llm:
        plan = {
            "command": sys.executable,
            "args": ["-m", "deepsift", "mcp"],
            "env": {
                "PATH": "/usr/bin:/bin",
                "HOME": str(tmp_path),
                "DEEPSIFT_DATA_DIR": str(tmp_path / "data"),
                "DEEPSIFT_LLM_BASE_URL": llm.url,
                "DEEPSIFT_LLM_API_KEY": "test",
            },
            "cwd": str(tmp_path),
            "root": str(shared),
            "outside": str(private / "secret.md"),
            "question": QUESTION,
            "followUp": FOLLOW_UP,
            "bad": bad,
        }
        (tmp_path / "plan.json").write_text(json.dumps(plan))
        done = subprocess.run(
            ["node", str(sdk / "client.mjs"), str(tmp_path / "plan.json")],
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout)

    assert seen["tools"] == ["ask", "get_report", "ingest", "list_collections", "research"]
    ingested = seen["ingest"]
    assert not ingested["isError"], ingested["text"]
    assert ingested["structured"]["added"] == 2 and ingested["structured"]["failed"] == 0
    assert any("added" in message for message in ingested["progress"])
    names = [c["name"] for c in seen["collections"]["structured"]["result"]]
    assert names == ["notes"]

    research = seen["research"]
    assert not research["isError"], research["text"]
    report = research["structured"]["report"]
    assert "[1]" in report and "## Sources" in report
    assert research["progress"][0].startswith("sub-queries") and len(research["progress"]) >= 3
    assert any(message.startswith("report written") for message in research["progress"])
    assert seen["reread"]["structured"]["report"] == report

    # The follow-up is answered from the run's evidence, citing it, and listed with the run.
    asked = seen["ask"]
    assert not asked["isError"], asked["text"]
    answer = asked["structured"]
    assert answer["kind"] == "answer" and answer["question"] == FOLLOW_UP
    assert "47 million" in answer["answer"] and answer["searched"] == [], answer
    cited = {int(n) for n in re.findall(r"\[(\d+)\]", answer["answer"])}
    assert cited and cited == {source["n"] for source in answer["sources"]}
    assert all(source["source"] == str(shared / "kestrel.md") for source in answer["sources"])
    listed = seen["listed"]["structured"]
    assert listed["report"] == report
    assert [(f["question"], f["kind"], f["answer"]) for f in listed["followups"]] == [
        (FOLLOW_UP, "answer", answer["answer"])
    ]

    # Outside the root the client shared: refused, nothing read.
    assert seen["outside"]["isError"] and "is outside the folders" in seen["outside"]["text"]
    assert "4711" not in json.dumps(seen)

    for answer in seen["bad"]:
        assert "thrown" not in answer, answer  # a tool error, never a crash or a hang
        assert answer["isError"] and "\n" not in answer["text"], answer
        assert "Traceback" not in answer["text"]
    fields = [answer["text"].split(":")[0] for answer in seen["bad"]]
    assert fields == [
        "question",
        "length",
        "sources",
        "paths",
        "collection name '9 lives' is invalid",
        "thread_id",
        "thread_id",
        "no research run has thread id '0123456789ab'",
    ], fields
    assert "Traceback" not in seen["serverLog"]
