"""`memrepo mcp` as a separate process, through the SDK's own clients: over stdio (spawned by
the stdio client) and over streamable HTTP; and its one-line answers to bad input."""

from __future__ import annotations

import contextlib
import io
import os
import select
import signal
import socket
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from bot import cli
from bot.mcp.catalog import CORE_MEMORY_URI as URI
from bot.memfs.store.repo import MemoryRepo
from tests.conftest import git, run_cli

TIMEOUT = 20


def command(memory: MemoryRepo, tmp_path: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "bot.cli", "mcp", "--repo", str(memory.root), "--home", str(tmp_path / "home"),
            "--poll", "0.05", *extra]


def compiled(memory: MemoryRepo) -> str:
    """What `memrepo compile` prints for the memory now."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli.main(["compile", "--repo", str(memory.root)]) == 0
    return out.getvalue()


def person_edits(memory: MemoryRepo, line: str) -> None:
    """A person's commit in the clone, with git itself (test_mcp.py runs the pre-commit hook)."""
    path = memory.root / "system" / "human.md"
    path.write_text(path.read_text(encoding="utf-8") + line + "\n", encoding="utf-8")
    git(memory.root, "commit", "-qam", "A person's edit", "--no-verify")


def text(result: types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


async def exercise(client: Client, memory: MemoryRepo, updates: list[str] | None, tag: str) -> dict[str, Any]:
    """A tool call, a refused call, then a person's commit: what the client saw of each."""
    seen: dict[str, Any] = {"tag": tag}
    seen["edit"] = await client.call_tool("core_memory_append", {
        "label": "human", "content": f"Likes {tag}.", "reason": f"Record {tag}"})
    seen["head_after_edit"] = git(memory.root, "rev-parse", "HEAD").strip()
    seen["refused"] = await client.call_tool("memory_delete", {"path": "system/nothing.md"})
    seen["head_after_refusal"] = git(memory.root, "rev-parse", "HEAD").strip()
    if updates is not None:  # resources/subscribe: wait for our own edit's announcement, then the person's
        while not updates:
            await anyio.sleep(0.02)
        count = len(updates)
        await anyio.to_thread.run_sync(person_edits, memory, f"Works {tag}.")
        while len(updates) == count:
            await anyio.sleep(0.02)
    else:  # subscriptions/listen
        async with client.listen(resource_subscriptions=[URI]) as events:
            await anyio.to_thread.run_sync(person_edits, memory, f"Works {tag}.")
            async for event in events:
                seen["event"] = event.uri
                break
    read = await client.read_resource(URI)
    seen["prompt"], seen["revision"] = read.contents[0].text, read.contents[0].meta["revision"]
    return seen


def check(seen: dict[str, Any], memory: MemoryRepo) -> None:
    assert not seen["edit"].is_error, text(seen["edit"])
    assert seen["edit"].structured_content["commit"] == seen["head_after_edit"]
    assert git(memory.root, "log", "-1", "--format=%an|%s", "HEAD~1").strip() == f"Ada|Record {seen['tag']}"
    assert seen["refused"].is_error
    assert "system/nothing.md" in text(seen["refused"])
    assert seen["head_after_refusal"] == seen["head_after_edit"]
    assert seen["revision"] == git(memory.root, "rev-parse", "HEAD").strip()
    assert f"Likes {seen['tag']}." in seen["prompt"] and f"Works {seen['tag']}." in seen["prompt"]
    assert seen["prompt"] + "\n" == compiled(memory)


# --------------------------------------------------------------------------- stdio
def test_stdio_subscribed_client_hears_of_every_head_move(memory: MemoryRepo, tmp_path: Path) -> None:
    updates: list[str] = []

    async def handler(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            updates.append(message.params.uri)

    params = StdioServerParameters(command=command(memory, tmp_path)[0], args=command(memory, tmp_path)[1:],
                                   env=dict(os.environ))

    async def main() -> dict[str, Any]:
        with (tmp_path / "server.log").open("w") as errlog, anyio.fail_after(TIMEOUT):
            async with Client(stdio_client(params, errlog=errlog), mode="legacy", message_handler=handler) as client:
                assert client.session.server_capabilities.resources.subscribe is True
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # deprecated only from protocol 2026-07-28 on
                    await client.subscribe_resource(URI)
                return await exercise(client, memory, updates, "tea")

    seen = anyio.run(main)
    check(seen, memory)
    assert set(updates) == {URI} and len(updates) >= 2
    assert "Traceback" not in (tmp_path / "server.log").read_text()


def test_stdio_listening_client(memory: MemoryRepo, tmp_path: Path) -> None:
    params = StdioServerParameters(command=sys.executable, args=command(memory, tmp_path)[1:], env=dict(os.environ))

    async def main() -> dict[str, Any]:
        with anyio.fail_after(TIMEOUT):
            async with Client(params) as client:
                assert client.session.protocol_version == "2026-07-28"
                return await exercise(client, memory, None, "tea")

    seen = anyio.run(main)
    check(seen, memory)
    assert seen["event"] == URI


# ---------------------------------------------------------------------------- HTTP
class HttpServer:
    """`memrepo mcp --http 0` in a child process; `url` from the line it prints."""

    def __init__(self, args: list[str]) -> None:
        self.process = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True)
        self.url = ""
        deadline = time.monotonic() + TIMEOUT
        line = ""
        while time.monotonic() < deadline and " at http://" not in line:
            ready, _, _ = select.select([self.process.stderr], [], [], 0.1)
            if ready:
                line = self.process.stderr.readline()
                if not line:
                    break
        if " at http://" not in line:
            self.stop()
            raise AssertionError(f"the server did not start: {line!r}")
        self.url = line.split(" at ", 1)[1].split()[0]

    def stop(self) -> tuple[int, str, str]:
        self.process.terminate()
        out, err = self.process.communicate(timeout=TIMEOUT)
        return self.process.returncode, out, err


def test_http_clients_of_both_protocol_eras(memory: MemoryRepo, tmp_path: Path) -> None:
    updates: list[str] = []

    async def handler(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            updates.append(message.params.uri)

    server = HttpServer(command(memory, tmp_path, "--http", "0"))
    try:
        assert server.url.startswith("http://127.0.0.1:") and server.url.endswith("/mcp")

        async def listening() -> dict[str, Any]:
            with anyio.fail_after(TIMEOUT):
                async with Client(server.url) as client:
                    assert client.session.protocol_version == "2026-07-28"
                    return await exercise(client, memory, None, "tea")

        async def subscribed() -> dict[str, Any]:
            with anyio.fail_after(TIMEOUT):
                async with Client(server.url, mode="legacy", message_handler=handler) as client:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")  # deprecated only from protocol 2026-07-28 on
                        await client.subscribe_resource(URI)
                    return await exercise(client, memory, updates, "coffee")

        seen = anyio.run(listening)
        check(seen, memory)
        assert seen["event"] == URI
        seen = anyio.run(subscribed)
        check(seen, memory)
        assert set(updates) == {URI} and len(updates) >= 2
    finally:
        code, out, err = server.stop()
    assert out == ""
    assert code in (0, -signal.SIGTERM), err  # uvicorn stops gracefully, then re-raises the signal
    assert "Traceback" not in err


# ----------------------------------------------------------------------- bad input
def test_not_a_memory_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "mcp", "--repo", str(tmp_path))
    assert code == 1
    assert out == ""
    assert err.startswith("memrepo: ") and err.count("\n") == 1


def test_port_in_use_is_one_line(memory: MemoryRepo, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        code, _, err = run_cli(capsys, "mcp", "--repo", str(memory.root), "--http", str(port))
    assert code == 1
    assert err.startswith(f"memrepo: cannot listen on 127.0.0.1:{port}: ") and err.count("\n") == 1


@pytest.mark.parametrize(("args", "says"), [
    (["--http", "70000"], "--http must be a port from 0 to 65535, found 70000"),
    (["--poll", "0"], "--poll must be a positive number of seconds"),
    (["--http", "0", "--host", "0.0.0.0"], "set a bearer token in MEMREPO_MCP_TOKEN"),
])
def test_bad_options_are_one_line(memory: MemoryRepo, capsys: pytest.CaptureFixture[str],
                                  monkeypatch: pytest.MonkeyPatch, args: list[str], says: str) -> None:
    monkeypatch.delenv("MEMREPO_MCP_TOKEN", raising=False)
    code, _, err = run_cli(capsys, "mcp", "--repo", str(memory.root), *args)
    assert code == 1
    assert says in err and err.count("\n") == 1


def test_no_agent_id_is_one_line(memory: MemoryRepo, capsys: pytest.CaptureFixture[str]) -> None:
    git(memory.root, "config", "--unset", "memrepo.agentId")
    code, out, err = run_cli(capsys, "mcp", "--repo", str(memory.root))
    assert code == 1
    assert out == ""
    assert err.startswith("memrepo: ") and err.count("\n") == 1
