"""The `memrepo` command: one subcommand per module in `bot/commands/`.

Only the command that runs is imported: `memrepo --help` lists the commands from the table
below, and a command's module (with pygit2, PyGithub, Redis or whatever it needs) is loaded
when argparse reaches its name. bench/startup.py measures what that saves.

Every error a user can cause is a MemrepoError and is printed as one line; anything else is
a bug, reported without a traceback unless MEMREPO_DEBUG is set.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import re
import sys
from collections.abc import Sequence
from typing import Any

from bot import __version__
from bot import texts as shared_texts
from bot.claude_code import texts as claude_code_texts
from bot.codex import texts as codex_texts
from bot.commands import texts
from bot.errors import MemrepoError

# Command -> its line in `memrepo --help`, in that order; `bot.commands.<command>` registers the
# same line (tests/cli/test_cli_startup.py keeps the two from drifting apart).
COMMANDS: dict[str, str] = {
    "init": texts.INIT_HELP,
    "clone": texts.CLONE_HELP,
    "validate": texts.VALIDATE_HELP,
    "ci": texts.CI_HELP,
    "tool": texts.TOOL_HELP,
    "compile": texts.COMPILE_HELP,
    "log": texts.LOG_HELP,
    "why": texts.WHY_HELP,
    "at": texts.AT_HELP,
    "repository": texts.REPOSITORY_HELP,
    "review": texts.REVIEW_HELP,
    "identity": texts.IDENTITY_HELP,
    "shared": texts.SHARED_HELP,
    "follow": texts.FOLLOW_HELP,
    "localhub": texts.LOCALHUB_HELP,
    "transcript": texts.TRANSCRIPT_HELP,
    "search": texts.SEARCH_HELP,
    "dream": texts.DREAM_HELP,
    "demo": texts.DEMO_HELP,
    "worker": texts.WORKER_HELP,
    "serve": texts.SERVE_HELP,
    "mcp": texts.MCP_HELP,
    "palace": texts.PALACE_HELP,
    "claude-code": claude_code_texts.CLAUDE_CODE_HELP,
    "codex": codex_texts.CODEX_HELP,
}


class _HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Keeps every command's help on the line of its name (argparse would wrap `repository`)."""

    def __init__(self, prog: str) -> None:
        super().__init__(prog, max_help_position=20, width=100)
        self._action_max_length = 18


def module_name(command: str) -> str:
    """The module in bot/commands/ that registers `command` (`claude-code`: claude_code)."""
    return f"bot.commands.{command.replace('-', '_')}"


def command_parser(name: str) -> argparse.ArgumentParser:
    """The whole parser of `memrepo NAME`, as its module registers it (importing the module)."""
    holder = argparse.ArgumentParser(prog="memrepo").add_subparsers(prog="memrepo")
    importlib.import_module(module_name(name)).register(holder)
    return holder.choices[name]


class _LazyCommand(argparse.ArgumentParser):
    """A command's place under `memrepo`: parsing its arguments loads the command's module and
    hands them to the parser that module registers, so only the command that runs is imported."""

    def __init__(self, *, command: str, **kwargs: Any) -> None:
        super().__init__(add_help=False, **kwargs)
        self.command = command

    def parse_known_args(self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
                         ) -> tuple[argparse.Namespace, list[str]]:
        return command_parser(self.command).parse_known_args(args, namespace)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="memrepo",
        description=texts.CLI_DESCRIPTION,
        formatter_class=_HelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"memrepo {__version__}")
    sub = parser.add_subparsers(title="commands", metavar="COMMAND", required=True, parser_class=_LazyCommand)
    for name, help_text in COMMANDS.items():
        sub.add_parser(name, help=help_text, command=name)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """`memrepo ARGV` in this process (tests); with no ARGV, the program itself (the console
    script, `python -m bot.cli`), which exits as soon as this returns. Then the objects left are
    frozen out of the collector: the interpreter's last collections would otherwise walk and
    free, one by one, the classes and functions pygit2, PyYAML and the command loaded, about
    10 ms of every `memrepo tool` call and pre-commit check. The process's exit releases them;
    the standard streams are still flushed and atexit handlers still run."""
    code = _command(argv)
    if argv is None:
        gc.freeze()
    return code


LOCK_LEFT = re.compile(r"failed to lock file '([^']+\.lock)'")  # libgit2's words for a lock it found taken
LOCKED = ("memrepo: {lock} exists: another git command is working in this clone, or one stopped before it "
          "finished (a crash, a kill), so this command stopped there. If no git command runs in the clone, "
          "remove that file and run again")


def lock_left(problem: str) -> str | None:
    """The lock file libgit2 found taken, from its error message; None for any other problem."""
    found = LOCK_LEFT.search(problem)
    if found:
        return found.group(1)
    return ".git/index.lock" if "the index is locked" in problem else None


def _command(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except MemrepoError as exc:
        print(f"memrepo: {exc}", file=sys.stderr)
        return int(exc.details.get("exit_code", 1))  # type: ignore[arg-type]
    except KeyboardInterrupt:
        print("memrepo: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # a bug: say so in one line, keep the traceback for debugging
        if os.environ.get("MEMREPO_DEBUG"):
            raise
        left = lock_left(str(exc))
        if left:
            print(LOCKED.format(lock=left), file=sys.stderr)
            return 75
        print(shared_texts.INTERNAL_ERROR.format(error=f"{type(exc).__name__}: {exc}"), file=sys.stderr)
        return 70


if __name__ == "__main__":
    sys.exit(main())
