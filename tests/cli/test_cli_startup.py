"""`memrepo` imports only the command that runs: `memrepo --help` loads no command module and
none of the heavy libraries, a `memrepo tool` write loads none of what only a sync, a dream or
the forge needs, each command still parses and prints its own help, and the table of commands
in bot/cli.py matches bot/commands/ (bench/startup.py measures the time saved)."""

from __future__ import annotations

import argparse
import importlib
import json
import pkgutil
import subprocess
import sys

import pytest

import bot.commands
from bot import cli
from bot.memfs.store.repo import MemoryRepo
from tests.conftest import run_cli

# What `memrepo --help` used to pay for: the forge client, Redis and rq, the web stack, git,
# and the layers above the memory core.
HEAVY = ("github", "redis", "rq", "flask", "werkzeug", "jinja2", "requests", "pygit2", "yaml", "mcp", "tqdm",
         "bot.integrator", "bot.dream", "bot.transcript", "bot.forge", "bot.serve", "bot.agent", "bot.memfs",
         "bot.pullrequest", "webhooks")


def modules_after(argv: list[str]) -> list[str]:
    """The modules a fresh interpreter holds after `memrepo ARGV` (which may exit through argparse)."""
    code = ("import json, sys\n"
            "from bot.cli import main\n"
            "try:\n"
            f"    main({argv!r})\n"
            "except SystemExit:\n"
            "    pass\n"
            "sys.stdout.flush()\n"
            "print(json.dumps(sorted(sys.modules)), file=sys.stderr)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stderr.strip().splitlines()[-1])


def loaded(modules: list[str], roots: tuple[str, ...]) -> list[str]:
    return [name for name in modules if any(name == root or name.startswith(root + ".") for root in roots)]


def commands(modules: list[str]) -> list[str]:
    """The command modules loaded; bot.commands.texts, what the command line says, is none."""
    return [name for name in modules if name.startswith("bot.commands.") and name != "bot.commands.texts"]


# What one `memrepo tool` write does not need, though modules it loads once reached for them:
# GitPython (only a sync starts git processes), the three-way merge of a sync, secrets (only a
# dream id draws), logging (only an unexpected error is logged), the integrator (routing needs
# only the policy's protected paths), and the forge, transcripts, dreams, pull requests, web
# stack and MCP above the write path; and the HTTP client (with the email parser it loads), which
# only a sync's failed authentication asks a localhub with.
NOT_FOR_A_TOOL_CALL = ("git", "gitdb", "urllib.request", "http.client", "email", "tempfile",
                       "github", "redis", "rq", "flask", "werkzeug", "jinja2", "requests", "mcp",
                       "jsonschema", "tqdm", "secrets", "logging", "bot.memfs.merge.markdown", "bot.integrator",
                       "bot.dream",
                       "bot.transcript", "bot.forge", "bot.serve", "bot.palace", "bot.provenance", "bot.mcp",
                       "bot.notify", "bot.pullrequest", "webhooks")


def test_help_imports_no_command_and_no_heavy_module() -> None:
    modules = modules_after(["--help"])
    assert "bot.cli" in modules
    assert loaded(modules, HEAVY) == []
    assert commands(modules) == []


def test_a_command_imports_its_own_module_only() -> None:
    modules = modules_after(["validate", "--help"])
    assert commands(modules) == ["bot.commands.validate"]
    assert loaded(modules, ("github", "redis", "rq", "flask", "werkzeug", "bot.integrator", "bot.dream",
                            "bot.pullrequest", "bot.transcript", "bot.forge")) == []


@pytest.mark.parametrize("push", [["--no-push"], []], ids=["no-push", "no-remote"])
def test_a_tool_call_imports_only_what_a_commit_needs(memory: MemoryRepo, push: list[str]) -> None:
    call = json.dumps({"command": "insert", "path": "system/human.md", "insert_line": -1,
                       "insert_text": "- likes tea", "reason": "Remember the tea"})
    before = memory.head_sha()
    modules = modules_after(["tool", *push, "--repo", str(memory.root), call])
    assert memory.head_sha() != before  # the call was committed, not refused
    assert "bot.agent.write_path" in modules and "pygit2" in modules
    assert loaded(modules, NOT_FOR_A_TOOL_CALL) == []


def test_the_pre_commit_check_imports_only_what_it_reads(memory: MemoryRepo) -> None:
    """`memrepo validate --staged` runs before every commit a person makes: it reads the index
    and HEAD, it writes nothing, syncs nothing and names no author."""
    modules = modules_after(["validate", "--staged", "--quiet", "--repo", str(memory.root)])
    assert "bot.memfs.store.checks" in modules
    assert loaded(modules, (*NOT_FOR_A_TOOL_CALL, "bot.identity", "bot.agent", "bot.memfs.sync")) == []


@pytest.mark.parametrize("argv", [["transcript", "rebuild", "--help"], ["dream", "--help"]])
def test_the_progress_library_loads_only_when_a_bar_is_drawn(argv: list[str]) -> None:
    assert loaded(modules_after(argv), ("tqdm",)) == []


def test_every_module_in_bot_commands_is_in_the_table() -> None:
    modules = {info.name for info in pkgutil.iter_modules(bot.commands.__path__)} - {"texts", "actions"}
    assert modules == {cli.module_name(name).rpartition(".")[2] for name in cli.COMMANDS}


@pytest.mark.parametrize("name", list(cli.COMMANDS))
def test_the_table_line_is_the_line_the_command_registers(name: str) -> None:
    sub = argparse.ArgumentParser(prog="memrepo").add_subparsers()
    importlib.import_module(cli.module_name(name)).register(sub)
    assert [(action.dest, action.help) for action in sub._choices_actions] == [(name, cli.COMMANDS[name])]


@pytest.mark.parametrize("name", list(cli.COMMANDS))
def test_command_help_exits_0(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, name, "--help")
    assert (code, err) == (0, "")
    assert out.startswith(f"usage: memrepo {name} ")


def test_a_command_error_is_reported_by_the_command_parser(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "tool")
    assert code == 2 and out == ""
    assert err.startswith("usage: memrepo tool ") and "memrepo tool: error:" in err
