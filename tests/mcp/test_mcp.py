"""The MCP server in this process, through the SDK's own client: tools, arguments, refusals,
search, the core memory resource and its update announcements (both protocol eras)."""

from __future__ import annotations

import warnings
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from bot.errors import MemrepoError
from bot.mcp import arguments, catalog
from bot.mcp.server import MemoryServer, Options
from bot.memfs.store.repo import MemoryRepo
from bot.transcript import TranscriptStore, documents
from tests.conftest import git, run_cli

# The receiver on a real server with a real Redis, and a remote with a second clone: test_notify_follower's.
from tests.webhooks.test_notify_follower import TOKEN, Receiver, World, announce, receiver  # noqa: F401

URI = catalog.CORE_MEMORY_URI
TIMEOUT = 10


def serve(memory: MemoryRepo, tmp_path: Path, *, mode: str = "legacy",
          handler: Callable[[Any], Awaitable[None]] | None = None,
          body: Callable[[Client, MemoryServer], Awaitable[Any]], **options: Any) -> Any:
    """Run `body(client, app)` against a server for `memory`, its HEAD watcher running; the
    server (its agent session) is closed afterwards."""
    app = MemoryServer(Options(repo=memory.root, home=str(tmp_path / "home"), poll_seconds=0.02, **options))
    try:
        return _run(app, mode, handler, body)
    finally:
        app.close()


def _run(app: MemoryServer, mode: str, handler: Callable[[Any], Awaitable[None]] | None,
         body: Callable[[Client, MemoryServer], Awaitable[Any]]) -> Any:
    result: list[Any] = []

    async def main() -> None:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(app.watcher.run)
            async with Client(app.server, mode=mode, message_handler=handler) as client:
                with anyio.fail_after(TIMEOUT):
                    result.append(await body(client, app))
            tasks.cancel_scope.cancel()

    anyio.run(main)
    return result[0]


def text(result: types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


def head(memory: MemoryRepo) -> str:
    return git(memory.root, "rev-parse", "HEAD").strip()


# ------------------------------------------------------------------------- tools
def test_lists_one_tool_per_command_with_exact_schemas(memory: MemoryRepo, tmp_path: Path) -> None:
    async def body(client: Client, app: MemoryServer) -> list[types.Tool]:
        return (await client.list_tools()).tools

    tools = {tool.name: tool for tool in serve(memory, tmp_path, body=body)}
    assert set(tools) == {"memory_view", "memory_create", "memory_str_replace", "memory_insert", "memory_delete",
                          "memory_rename", "memory_update_description", "memory_apply_patch", "core_memory_append",
                          "core_memory_replace", "archival_memory_insert", "archival_memory_search",
                          "conversation_search", "memory_search", "memory_why", "memory_at"}
    replace = tools["memory_str_replace"].input_schema
    assert replace["required"] == ["path", "old_str", "new_str"]
    assert replace["additionalProperties"] is False
    assert {"reason", "expected_revision"} <= set(replace["properties"])
    assert tools["memory_view"].annotations.read_only_hint is True
    assert tools["memory_delete"].annotations.destructive_hint is True
    assert tools["memory_str_replace"].annotations.read_only_hint is False


def test_an_edit_is_one_commit_by_the_agent(memory: MemoryRepo, tmp_path: Path) -> None:
    before = head(memory)

    async def body(client: Client, app: MemoryServer) -> types.CallToolResult:
        return await client.call_tool("memory_str_replace", {
            "path": "system/human.md", "old_str": "Nothing recorded yet.", "new_str": "Prefers short answers.",
            "reason": "Record how the user likes answers"})

    result = serve(memory, tmp_path, body=body)
    assert not result.is_error, text(result)
    after = head(memory)
    assert git(memory.root, "rev-parse", "HEAD~1").strip() == before
    assert result.structured_content["commit"] == after
    assert git(memory.root, "log", "-1", "--format=%an <%ae>|%s").strip() == \
        "Ada <a1@agents.memrepo>|Record how the user likes answers"
    assert "Prefers short answers." in git(memory.root, "show", "HEAD:system/human.md")
    assert git(memory.root, "status", "--porcelain") == ""


def test_create_and_view(memory: MemoryRepo, tmp_path: Path) -> None:
    async def body(client: Client, app: MemoryServer) -> tuple[types.CallToolResult, types.CallToolResult]:
        created = await client.call_tool("memory_create", {
            "path": "reference/tea.md", "description": "Tea notes", "file_text": "Green, no sugar.\n"})
        return created, await client.call_tool("memory_view", {"path": "reference/tea.md"})

    created, viewed = serve(memory, tmp_path, body=body)
    assert not created.is_error, text(created)
    assert git(memory.root, "show", "HEAD:reference/tea.md") == "---\ndescription: Tea notes\n---\nGreen, no sugar.\n"
    assert not viewed.is_error
    assert "Green, no sugar." in text(viewed)


@pytest.mark.parametrize(("name", "args", "says"), [
    ("memory_str_replace", {"path": "system/human.md", "old_str": "not there", "new_str": "x"}, "0 matches"),
    ("memory_create", {"path": "system/human.md", "file_text": "x"}, "system/human.md"),
    ("memory_delete", {"path": "../outside.md"}, ".."),
    ("memory_str_replace", {"path": "system/human.md", "old_str": "x"}, "needs the argument 'new_str'"),
    ("memory_insert", {"path": "system/human.md", "insert_line": "top", "insert_text": "x"},
     "'insert_line' must be a whole number, found text"),
    ("memory_delete", {"path": "system/human.md", "force": True}, "does not take the argument 'force'"),
    ("memory_search", {"query": "tea", "scope": "everything"}, "'scope' must be one of: all, memory, transcripts"),
    ("memory_search", {"query": "tea", "k": 0}, "'k' must be from 1 to 50, found 0"),
])
def test_refused_calls_are_tool_errors_and_change_nothing(memory: MemoryRepo, tmp_path: Path, name: str,
                                                         args: dict[str, Any], says: str) -> None:
    before = head(memory)

    async def body(client: Client, app: MemoryServer) -> types.CallToolResult:
        return await client.call_tool(name, args)

    result = serve(memory, tmp_path, body=body)
    assert result.is_error
    assert says in text(result)
    assert head(memory) == before
    assert git(memory.root, "status", "--porcelain") == ""


def test_argument_errors_are_one_line(memory: MemoryRepo, tmp_path: Path) -> None:
    async def body(client: Client, app: MemoryServer) -> types.CallToolResult:
        return await client.call_tool("memory_view", {"view_range": [1, "x"]})

    result = serve(memory, tmp_path, body=body)
    assert result.is_error
    assert text(result) == "memory_view: 'view_range.1' must be a whole number, found text"


def test_unknown_tool_is_a_protocol_error(memory: MemoryRepo, tmp_path: Path) -> None:
    async def body(client: Client, app: MemoryServer) -> None:
        with pytest.raises(MCPError, match="unknown tool 'memory_fly'"):
            await client.call_tool("memory_fly", {})

    serve(memory, tmp_path, body=body)


# ------------------------------------------------------------------------ search
def test_search_finds_a_recorded_message_and_a_memory_file(memory: MemoryRepo, tmp_path: Path) -> None:
    with TranscriptStore(tmp_path / "home", fsync=False) as store:
        store.append("a1", "c1", "user", "My cat Miso hates thunderstorms.")
        store.append("a1", "c1", "assistant", "Noted.")
    (memory.root / "system" / "human.md").write_text(
        "---\ndescription: The user\n---\nHas a cat called Miso.\n", encoding="utf-8")
    git(memory.root, "commit", "-qam", "Record the cat")

    async def body(client: Client, app: MemoryServer) -> types.CallToolResult:
        return await client.call_tool("memory_search", {"query": "Miso thunderstorms"})

    result = serve(memory, tmp_path, body=body)
    assert not result.is_error, text(result)
    found = result.structured_content
    assert [hit["path"] for hit in found["memory"]] == ["system/human.md"]
    assert found["memory"][0]["line"] == 4
    assert found["transcripts"][0]["text"] == "My cat Miso hates thunderstorms."
    assert "**Miso** hates **thunderstorms**" in text(result)


def test_search_without_transcripts_says_so(memory: MemoryRepo, tmp_path: Path) -> None:
    async def body(client: Client, app: MemoryServer) -> types.CallToolResult:
        return await client.call_tool("memory_search", {"query": "persona", "scope": "transcripts"})

    result = serve(memory, tmp_path, body=body)
    assert not result.is_error
    assert result.structured_content == {"memory": None, "transcripts": None}
    assert "No conversation of agent a1 is recorded" in text(result)


def test_search_files_ranks_by_bm25() -> None:
    files = {"a.md": "tea tea tea and cake", "b.md": "coffee and tea", "c.md": "coffee only", "d.md": "water"}
    hits = documents.search_files(files, "tea", 5)
    assert [hit.path for hit in hits] == ["a.md", "b.md"]
    assert hits[0].score > hits[1].score
    with pytest.raises(MemrepoError):
        documents.search_files(files, "   ", 5)


def test_searchable_leaves_out_machine_state() -> None:
    files = {"system/a.md": b"x", ".memrepo/config.yml": b"y", ".github/workflows/v.yml": b"z"}
    assert documents.searchable(files) == {"system/a.md": "x"}


def test_arguments_fill_defaults() -> None:
    assert arguments.check(catalog.SEARCH_TOOL, {"query": "tea"}) == {"query": "tea", "scope": "all", "k": 5}


# --------------------------------------------------------------------- resource
def test_resource_equals_memrepo_compile(memory: MemoryRepo, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    async def body(client: Client, app: MemoryServer) -> tuple[list[types.Resource], types.ReadResourceResult]:
        return (await client.list_resources()).resources, await client.read_resource(URI)

    resources, read = serve(memory, tmp_path, body=body)
    assert [r.uri for r in resources] == [URI]
    code, out, _ = run_cli(capsys, "compile", "--repo", str(memory.root))
    assert code == 0
    assert read.contents[0].text + "\n" == out
    assert read.contents[0].meta == {"revision": head(memory)}


def test_unknown_resource_is_an_error(memory: MemoryRepo, tmp_path: Path) -> None:
    async def body(client: Client, app: MemoryServer) -> None:
        with pytest.raises(MCPError, match="unknown resource"):
            await client.read_resource("memrepo://nothing")

    serve(memory, tmp_path, body=body)


def test_own_edit_is_announced_to_a_resources_subscribe_client(memory: MemoryRepo, tmp_path: Path) -> None:
    updates: list[str] = []

    async def handler(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            updates.append(message.params.uri)

    async def body(client: Client, app: MemoryServer) -> str:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # resources/subscribe: deprecated for 2026-07-28, current before
            await client.subscribe_resource(URI)
        result = await client.call_tool("core_memory_append", {"label": "human", "content": "Drinks tea."})
        assert not result.is_error, text(result)
        while not updates:
            await anyio.sleep(0.01)
        return (await client.read_resource(URI)).contents[0].text

    prompt = serve(memory, tmp_path, handler=handler, body=body)
    assert updates[0] == URI
    assert "Drinks tea." in prompt


def test_outside_commit_is_announced_to_a_listening_client(memory: MemoryRepo, tmp_path: Path) -> None:
    async def body(client: Client, app: MemoryServer) -> tuple[str, str]:
        assert client.session.protocol_version == "2026-07-28"
        async with client.listen(resource_subscriptions=[URI]) as events:
            path = memory.root / "system" / "human.md"
            path.write_text(path.read_text(encoding="utf-8") + "Works nights.\n", encoding="utf-8")
            await anyio.to_thread.run_sync(lambda: git(memory.root, "commit", "-qam", "A person's edit"))
            async for event in events:
                assert event.uri == URI
                break
        read = await client.read_resource(URI)
        return read.contents[0].text, read.contents[0].meta["revision"]

    prompt, revision = serve(memory, tmp_path, mode="auto", body=body)
    assert "Works nights." in prompt
    assert revision == head(memory)


# ----------------------------------------------------------------------- history
def test_why_names_the_agent_commit_behind_a_line(memory: MemoryRepo, tmp_path: Path) -> None:
    async def body(client: Client, app: MemoryServer) -> types.CallToolResult:
        edit = await client.call_tool("memory_str_replace", {
            "path": "system/human.md", "old_str": "Nothing recorded yet.", "new_str": "Prefers tea.",
            "reason": "Record the tea"})
        assert not edit.is_error, text(edit)
        return await client.call_tool("memory_why", {"path": "system/human.md", "line": 4})

    result = serve(memory, tmp_path, body=body)
    assert not result.is_error, text(result)
    origin = result.structured_content["origins"][0]
    assert origin["commit"]["sha"] == head(memory)
    assert "Prefers tea." in text(result) and "Record the tea" in text(result)


def test_at_shows_a_file_as_it_was(memory: MemoryRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = head(memory)
    when = git(memory.root, "log", "-1", "--format=%cI").strip()
    path = memory.root / "system" / "human.md"
    path.write_text(path.read_text(encoding="utf-8").replace("Nothing recorded yet.", "Later news."), encoding="utf-8")
    later = int(git(memory.root, "log", "-1", "--format=%ct").strip()) + 86400
    monkeypatch.setenv("GIT_COMMITTER_DATE", f"@{later} +0000")
    git(memory.root, "commit", "-qam", "Later", "--no-verify")

    async def body(client: Client, app: MemoryServer) -> types.CallToolResult:
        return await client.call_tool("memory_at", {"when": when, "path": "system/human.md"})

    result = serve(memory, tmp_path, body=body)
    assert not result.is_error, text(result)
    assert result.structured_content["commit"] == first
    assert "Nothing recorded yet." in text(result) and "Later news." not in text(result)


@pytest.mark.parametrize(("name", "args", "says"), [
    ("memory_at", {"when": "yesterday"}, "yesterday"),
    ("memory_at", {"when": "1999-01-01"}, "1999-01-01"),
    ("memory_why", {"path": "system/nothing.md"}, "system/nothing.md"),
    ("memory_why", {"path": "system/human.md", "line": 99}, "99"),
])
def test_history_errors_are_tool_errors(memory: MemoryRepo, tmp_path: Path, name: str, args: dict[str, Any],
                                        says: str) -> None:
    async def body(client: Client, app: MemoryServer) -> types.CallToolResult:
        return await client.call_tool(name, args)

    result = serve(memory, tmp_path, body=body)
    assert result.is_error
    assert says in text(result) and "\n" not in text(result).strip()
    assert "bug" not in text(result)


# ------------------------------------------------------------- a remote and head events
def test_edits_reach_the_remote_and_head_events_reach_the_client(
        tmp_path: Path, receiver: Receiver, rclient: Any) -> None:  # noqa: F811 (fixtures imported above)
    """With the receiver's event stream followed by the server's agent session (as `--events`
    does), a commit pushed from another clone and announced as a head event syncs the clone, and
    the client hears of it."""
    world = World(tmp_path)
    memory = world.agent

    async def body(client: Client, app: MemoryServer) -> tuple[types.CallToolResult, str]:
        assert app.session.subscriber is not None
        assert await anyio.to_thread.run_sync(app.session.subscriber.connected.wait, 10)
        edit = await client.call_tool("core_memory_append", {"label": "human", "content": "Own edit."})
        async with client.listen(resource_subscriptions=[URI]) as events:
            before, sha = await anyio.to_thread.run_sync(world.push_from_other, "From elsewhere.")
            announce(rclient, before, sha)
            async for _ in events:
                if app.watcher.head == sha:
                    break
        return edit, (await client.read_resource(URI)).contents[0].text

    app = MemoryServer(Options(repo=memory.root, home=str(tmp_path / "home"), poll_seconds=0.02,
                               events_url=receiver.events_url(), agent_token=TOKEN))
    try:
        edit, prompt = _run(app, "auto", None, body)
    finally:
        app.close()
    assert app.session.subscriber is not None and not app.session.subscriber.running  # closed with the server
    assert not edit.is_error, text(edit)
    assert edit.structured_content["pushed"] is True and edit.structured_content["route"] == "direct"
    assert "Own edit." in prompt and "From elsewhere." in prompt
    assert head(memory) == world.remote_main()


def test_the_read_tools_address_an_attached_shared_memory_as_shared_name_path(
        memory: MemoryRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from bot.memfs import shared_projection, sync
    from bot.memfs.create import init_repository

    bare = tmp_path / "team.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    team = init_repository(tmp_path / "team", "t0", "Team")
    (team.root / "runbooks").mkdir()
    (team.root / "runbooks" / "deploys.md").write_text(
        "---\ndescription: How we deploy.\n---\n\n- Production deploys happen on Tuesdays only.\n")
    git(team.root, "add", "-A")
    git(team.root, "commit", "-q", "--no-verify", "-m", "runbook")
    sync.set_remote(team, str(bare))
    assert sync.push(team).pushed
    when = git(team.root, "log", "-1", "--format=%cI").strip()
    shared_projection.attach(memory, str(bare))
    path = "shared/team/runbooks/deploys.md"

    async def body(client: Client, app: MemoryServer) -> dict[str, types.CallToolResult]:
        return {"view": await client.call_tool("memory_view", {"path": path}),
                "search": await client.call_tool("memory_search", {"query": "Tuesdays deploys", "scope": "memory"}),
                "at": await client.call_tool("memory_at", {"when": when, "path": path}),
                "why": await client.call_tool("memory_why", {"path": path, "line": 5})}

    results = serve(memory, tmp_path, body=body)
    for name, result in results.items():
        assert not result.is_error, (name, text(result))
    assert "Tuesdays only" in text(results["view"])
    assert [hit["path"] for hit in results["search"].structured_content["memory"]] == [path]
    assert results["at"].structured_content["path"] == path and "Tuesdays only" in text(results["at"])
    assert results["at"].structured_content["commit"] == git(team.root, "rev-parse", "HEAD").strip()
    assert "runbook" in text(results["why"])
    code, out, err = run_cli(capsys, "at", when, path, "--repo", str(memory.root))
    assert code == 0 and "Production deploys happen on Tuesdays only." in out, err
