"""`deepsift mcp`, driven as an assistant would: the MCP SDK's stdio client launches the server
as a subprocess and calls its tools."""

import re
import sys
from pathlib import Path

import anyio
from mcp import Client, types
from mcp.client.stdio import StdioServerParameters, stdio_client

from conftest import CORPUS
from fake_openai import FakeOpenAI
from scripted import ScriptedResearcher

QUESTION = "Why was Kestrel Works built and what did it cost?"
TOOLS = {"research", "list_collections", "ingest", "get_report", "ask"}
FOLLOW_UP = "Since when has the River Orrin been receiving treatment at Kestrel Works?"


def server(tmp_path: Path, llm_url: str, *allow: Path) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "deepsift", "mcp", *(f"--allow={folder}" for folder in allow)],
        env={
            "HOME": str(tmp_path),
            "DEEPSIFT_DATA_DIR": str(tmp_path / "data"),
            "DEEPSIFT_LLM_BASE_URL": llm_url,
            "DEEPSIFT_LLM_API_KEY": "test",
        },
        cwd=tmp_path,
    )


class Progress:
    """The progress notifications one call received."""

    def __init__(self) -> None:
        self.messages: list[str] = []
        self.values: list[float] = []

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        self.values.append(progress)
        self.messages.append(message or "")


def error_text(result) -> str:
    assert result.is_error, result
    (content,) = result.content
    return content.text


def test_an_mcp_client_ingests_researches_and_rereads_a_cited_report(tmp_path, scripted_llm):
    stderr = (tmp_path / "server-stderr.txt").open("w")

    async def session() -> dict:
        seen = {}
        launch = server(tmp_path, scripted_llm.url, CORPUS)
        async with Client(stdio_client(launch, stderr)) as client:
            seen["tools"] = {tool.name for tool in (await client.list_tools()).tools}
            seen["ingest_progress"] = Progress()
            seen["ingest"] = await client.call_tool(
                "ingest",
                {
                    "paths": [str(CORPUS / "science")],
                    "collection": "science",
                    "description": "science of Lake Veldmere",
                },
                progress_callback=seen["ingest_progress"],
            )
            seen["collections"] = await client.call_tool("list_collections", {})
            seen["progress"] = Progress()
            seen["research"] = await client.call_tool(
                "research",
                {"question": QUESTION, "sources": ["science"], "length": "brief"},
                progress_callback=seen["progress"],
            )
            thread_id = seen["research"].structured_content["thread_id"]
            seen["reread"] = await client.call_tool("get_report", {"thread_id": thread_id})
            return seen

    seen = anyio.run(session)
    stderr.close()

    assert seen["tools"] == TOOLS
    ingested = seen["ingest"].structured_content
    assert not seen["ingest"].is_error and ingested["added"] >= 3 and ingested["failed"] == 0
    assert any("added" in m and ".md" in m for m in seen["ingest_progress"].messages)
    (science,) = seen["collections"].structured_content["result"]
    assert science["name"] == "science" and science["chunks"] > 0

    research = seen["research"]
    assert not research.is_error, research.content
    found = research.structured_content
    assert found["status"] == "done" and "[1]" in found["report"]
    assert "## Sources" in found["report"] and found["sources"]
    assert all(source["source"].startswith(str(CORPUS)) for source in found["sources"])
    progress = seen["progress"]
    assert len(progress.messages) >= 3 and progress.values == sorted(progress.values)
    assert progress.messages[0].startswith("sub-queries") and "[bold]" not in progress.messages[0]
    assert any(m.startswith("report written") for m in progress.messages), progress.messages

    reread = seen["reread"].structured_content
    assert reread["report"] == found["report"] and reread["sources"] == found["sources"]
    assert reread["thread_id"] == found["thread_id"] and reread["usage"]["llm_calls"] > 0
    assert reread["version"] == 1 and reread["followups"] == []
    assert "Traceback" not in (tmp_path / "server-stderr.txt").read_text()


def test_an_mcp_client_asks_a_finished_run_follow_ups_that_get_report_lists(tmp_path, scripted_llm):
    async def session() -> dict:
        seen = {}
        async with Client(server(tmp_path, scripted_llm.url, CORPUS)) as client:
            science = {"paths": [str(CORPUS / "science")], "collection": "science"}
            assert not (await client.call_tool("ingest", science)).is_error
            research = await client.call_tool("research", {"question": QUESTION})
            seen["research"] = research.structured_content
            thread_id = seen["research"]["thread_id"]
            calls = {
                "answer": ("ask", {"thread_id": thread_id, "question": FOLLOW_UP}),
                "table": ("ask", {"thread_id": thread_id, "question": "as a table"}),
                "unknown": ("ask", {"thread_id": "0123456789ab", "question": FOLLOW_UP}),
                "listed": ("get_report", {"thread_id": thread_id}),
                "version 2": ("get_report", {"thread_id": thread_id, "version": 2}),
                "version 3": ("get_report", {"thread_id": thread_id, "version": 3}),
            }
            for name, (tool, arguments) in calls.items():
                seen[name] = await client.call_tool(tool, arguments)
            return seen

    seen = anyio.run(session)
    research = seen["research"]

    assert not seen["answer"].is_error, seen["answer"].content
    answer = seen["answer"].structured_content
    assert answer["kind"] == "answer" and answer["question"] == FOLLOW_UP
    assert answer["thread_id"] == research["thread_id"] and answer["report"] == ""
    assert "April 2024" in answer["answer"] and answer["usage"]["llm_calls"] >= 1
    # From the run's evidence, cited with the numbers the report gives the same documents.
    assert answer["searched"] == []
    cited = {int(n) for n in re.findall(r"\[(\d+)\]", answer["answer"])}
    assert cited and cited == {source["n"] for source in answer["sources"]}
    # The report's documents keep its numbers; one the report did not cite is numbered after.
    reported = {source["source"]: source["n"] for source in research["sources"]}
    for source in answer["sources"]:
        assert reported.get(source["source"], source["n"]) == source["n"]
        assert source["source"] in reported or source["n"] > len(reported)

    table = seen["table"].structured_content
    assert table["kind"] == "report" and table["version"] == 2 and table["answer"] == ""
    assert "|---|" in table["report"] and table["report"] != research["report"]

    assert error_text(seen["unknown"]) == "no research run has thread id '0123456789ab'"

    listed = seen["listed"].structured_content
    assert listed["version"] == 1 and listed["report"] == research["report"]
    assert listed["followups"] == [
        {
            "question": FOLLOW_UP,
            "kind": "answer",
            "answer": answer["answer"],
            "version": 0,
            "sources": answer["sources"],
        },
        {
            "question": "as a table",
            "kind": "report",
            "answer": "",
            "version": 2,
            "sources": table["sources"],
        },
    ]
    # Version 2 is the table, the answer after it as an appendix.
    version_2 = seen["version 2"].structured_content
    assert version_2["version"] == 2 and version_2["report"].startswith(table["report"].rstrip())
    appendix = version_2["report"].split("## Follow-up questions", 1)[1]
    assert f"### {FOLLOW_UP}" in appendix and "Kestrel Works" in appendix
    assert error_text(seen["version 3"]) == (
        f"version 3: run {research['thread_id']} has versions 1 to 2"
    )


def test_bad_arguments_are_tool_errors_of_one_clear_line(tmp_path, scripted_llm):
    async def session() -> list:
        async with Client(server(tmp_path, scripted_llm.url)) as client:
            calls = [
                ("research", {"question": QUESTION, "sources": ["nope"]}),
                ("research", {"question": "  "}),
                ("get_report", {"thread_id": "0123456789ab"}),
                ("ingest", {"paths": [str(tmp_path / "missing")], "collection": "9 lives"}),
                ("ingest", {"paths": [str(CORPUS)], "collection": "notes"}),
                ("research", {"question": QUESTION, "length": "epic"}),
                ("research", {"question": 5}),
                ("ingest", {"paths": "/a", "collection": "c"}),
                ("get_report", {}),
                ("research", {"question": "q" * 200_000}),
                ("research", {"question": QUESTION, "language": "x" * 46_000}),
                ("ingest", {"paths": [f"{tmp_path}/a\x00b.md"], "collection": "c"}),
                ("ingest", {"paths": [f"{tmp_path}/{'x' * 5_000}.md"], "collection": "c"}),
                ("ask", {"thread_id": "0123456789ab", "question": QUESTION}),
                ("ask", {"thread_id": "0123456789ab"}),
                ("get_report", {"thread_id": "0123456789ab", "version": 0}),
            ]
            return [await client.call_tool(name, arguments) for name, arguments in calls]

    answers = [error_text(result) for result in anyio.run(session)]
    unknown, empty, no_run, bad_name, none_allowed, bad_length, *bad_types = answers[:9]
    long_question, long_language, nul, long_name, ask_no_run, no_question, version_0 = answers[9:]

    assert unknown.endswith("no collection named 'nope'; existing: none")
    assert empty.endswith("the question is empty")
    assert no_run.endswith("no research run has thread id '0123456789ab'")
    assert bad_name.endswith(
        "collection name '9 lives' is invalid: use letters, digits and _, "
        "not starting with a digit or _rebuild_; e.g. docs_9_lives"
    )
    assert none_allowed.endswith(
        "paths: this server may read no folder: start it with deepsift mcp --allow FOLDER "
        "(setting mcp_ingest_folders), or share the folder as a root from the client"
    )
    assert ask_no_run == "no research run has thread id '0123456789ab'"
    for line in (unknown, empty, no_run, bad_name, none_allowed, ask_no_run):
        assert "\n" not in line and "Traceback" not in line
        assert not line.startswith("Error executing tool"), line  # the user's line, as it is
    assert bad_length == "length: Input should be 'brief', 'standard' or 'long'"
    assert bad_types == [
        "question: Input should be a valid string",
        "paths: Input should be a valid list",
        "thread_id: Field required",
    ]
    # As the web app caps them; a NUL byte or an overlong name was a traceback.
    assert long_question == "question: String should have at most 4000 characters"
    assert long_language == "language: String should have at most 40 characters"
    assert nul.endswith("paths: a path holds a NUL byte; give plain file paths")
    assert long_name.endswith("... is longer than a file system allows")
    assert no_question == "question: Field required"
    assert version_0 == "version: Input should be greater than or equal to 1"
    assert scripted_llm.requests == []


def test_ingest_reads_only_inside_the_allowed_folders_and_the_client_s_roots(
    tmp_path, scripted_llm
):
    shared, private = tmp_path / "shared", tmp_path / "private"
    (shared / "notes").mkdir(parents=True)
    private.mkdir()
    (shared / "notes" / "a.md").write_text("# A\n\nThe Heron Lock opened in 1911.\n")
    (private / "secret.md").write_text("# Secret\n\nThe safe's code is 4711.\n")
    (shared / "notes" / "link.md").symlink_to(private / "secret.md")
    (shared / "empty").mkdir()
    (shared / "empty" / "blank.md").write_text("")

    async def roots(context) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri=shared.as_uri(), name="shared")])

    async def session() -> list:
        launch = server(tmp_path, scripted_llm.url, CORPUS / "science")
        # The initialize handshake: roots are a capability of that protocol (as assistants
        # speak it), deprecated after it.
        async with Client(launch, mode="legacy", list_roots_callback=roots) as client:
            calls = [
                ("ingest", {"paths": [str(private / "secret.md")], "collection": "a"}),
                ("ingest", {"paths": ["secret.md"], "collection": "a"}),
                ("ingest", {"paths": [str(shared / "notes" / "link.md")], "collection": "b"}),
                ("ingest", {"paths": [str(shared / "notes")], "collection": "c"}),
                ("ingest", {"paths": [str(shared / "empty")], "collection": "d"}),
                ("list_collections", {}),
            ]
            return [await client.call_tool(name, arguments) for name, arguments in calls]

    outside, relative, only_link, folder, nothing, listed = anyio.run(session)

    assert "paths: " + repr(str(private / "secret.md")) + " is outside the folders" in (
        error_text(outside)
    )
    assert error_text(relative).endswith("paths: 'secret.md' is not absolute; give absolute paths")
    assert " is outside the folders" in error_text(only_link)  # a link is where it leads
    files = {Path(f["path"]).name: f for f in folder.structured_content["files"]}
    assert files["a.md"]["status"] == "added"
    assert files["secret.md"] == {  # met as link.md inside the folder
        "path": str(private / "secret.md"),
        "status": "failed",
        "chunks": 0,
        "error": "leads outside the allowed folders",
    }
    # Every input failed: a tool error, and no empty collection left behind.
    assert error_text(nothing).endswith(
        "nothing was ingested: " + str(shared / "empty" / "blank.md") + ": empty file"
    )
    names = {c["name"] for c in listed.structured_content["result"]}
    assert names == {"c"}


def test_a_cancelled_research_call_stops_the_run(tmp_path):
    with FakeOpenAI(ScriptedResearcher(), delay=0.3) as slow:

        async def session() -> tuple[int, int]:
            launch = server(tmp_path, slow.url, CORPUS)
            launch.env["DEEPSIFT_LLM_CONCURRENCY"] = "1"
            async with Client(launch) as client:
                science = {"paths": [str(CORPUS / "science")], "collection": "science"}
                assert not (await client.call_tool("ingest", science)).is_error
                first_step = anyio.Event()

                async def progress(value, total, message) -> None:
                    first_step.set()

                async def call() -> None:
                    await client.call_tool(
                        "research", {"question": QUESTION}, progress_callback=progress
                    )

                async with anyio.create_task_group() as calls:
                    calls.start_soon(call)
                    await first_step.wait()
                    calls.cancel_scope.cancel()
                at_cancel = len(slow.requests)
                await anyio.sleep(3)
                return at_cancel, len(slow.requests)

        at_cancel, after = anyio.run(session)

    # One request was in flight at most (llm_concurrency 1); a full run makes about ten.
    assert after <= at_cancel + 1, (at_cancel, after)
    assert after < 6
