"""The README's "Your own folder" commands, read from the README itself and run in order as a new
user runs them after `make demo`: activate, ingest a folder, research it, list the runs, ask a
follow-up, export to PDF. The scripted model stands in for the LLM; the output the README shows
must be what the commands print."""

import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from conftest import CORPUS, ROOT

README = ROOT / "README.md"
ACTIVATE = Path(sys.prefix) / "bin" / "activate"
STEPS = [  # what each command must be, in order
    "source .venv/bin/activate",
    "deepsift ingest ~/notes ",
    "deepsift research ",
    "deepsift runs",
    "deepsift ask THREAD_ID ",
    "deepsift ask THREAD_ID -o report.pdf",
]


def readme_steps() -> list[tuple[str, list[str]]]:
    """Each `$ command` of the section's console blocks, with the lines it shows as its output."""
    section = README.read_text().split("\n## Your own folder\n", 1)[1].split("\n## ", 1)[0]
    steps: list[tuple[str, list[str]]] = []
    for block in re.findall(r"^```console\n(.*?)^```", section, re.M | re.S):
        for line in block.splitlines():
            if line.startswith("$ "):
                steps.append((line[2:], []))
            else:
                steps[-1][1].append(line)
    return steps


def shown(text: str, home: str) -> str:
    """Text as compared: figures, thread ids, the home folder, spacing and wrapping set aside."""
    text = re.sub(r"\b[0-9a-f]{12}\b", "ID", text.replace(home, "~"))
    return " ".join(re.sub(r"\d+", "0", text).split())


def test_the_readme_s_own_folder_is_the_documented_steps_in_order():
    commands = [command for command, _ in readme_steps()]

    assert len(commands) == len(STEPS), commands
    for command, step in zip(commands, STEPS, strict=True):
        assert command.startswith(step), (command, step)


@pytest.mark.skipif(not ACTIVATE.exists(), reason=f"tests run outside a venv: no {ACTIVATE}")
def test_the_readme_s_own_folder_commands_run_in_order_and_print_what_it_shows(
    tmp_path, scripted_llm, request
):
    home, work = Path(tempfile.mkdtemp(prefix="home-")), tmp_path / "work"
    request.addfinalizer(lambda: shutil.rmtree(home))  # short: a path wrapped mid-name compares
    shutil.copytree(CORPUS / "operations", home / "notes")
    work.mkdir()
    (work / ".venv").symlink_to(sys.prefix)  # the venv the tests run in: make's .venv in CI
    environment = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(home),
        "COLUMNS": "96",  # the README's output is as wide
        "DEEPSIFT_LLM_BASE_URL": scripted_llm.url,
        "DEEPSIFT_LLM_API_KEY": "test",
    }
    (activate, _), *steps = readme_steps()
    thread_id = ""

    def run(command: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            ["bash", "-c", command.replace("THREAD_ID", thread_id)],
            capture_output=True,
            text=True,
            env=environment,
            cwd=work,
            timeout=300,
        )

    found = run(f"{activate} && command -v deepsift")
    assert found.returncode == 0 and found.stdout.strip() == f"{sys.prefix}/bin/deepsift"
    for command, output in steps:
        result = run(f"{activate} && {command}")
        printed = result.stdout + result.stderr
        assert result.returncode == 0, (command, printed)
        said = shown(printed, str(home))
        readme = [shown(line, "/home/you") for line in output if line.strip() not in ("", "...")]
        assert [line for line in readme if line not in said] == [], (command, printed)
        if command == "deepsift runs":
            (thread_id,) = re.findall(r"^│ ([0-9a-f]{12}) +│", result.stdout, re.M)

    assert (work / "report.md").read_text().startswith("# ")
    assert (work / "report.pdf").read_bytes().startswith(b"%PDF")
    assert (work / ".deepsift" / "checkpoints.sqlite").exists()  # the default data folder
