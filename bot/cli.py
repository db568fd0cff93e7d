"""The `memrepo` command: one subcommand per module in `bot/commands/`.

Every error a user can cause is a MemrepoError and is printed as one line; anything else is
a bug, reported without a traceback unless MEMREPO_DEBUG is set.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from bot import __version__, messages
from bot.errors import MemrepoError

# Order is the order of `memrepo --help`.
COMMANDS = ("init", "validate", "tool", "compile", "log", "why", "at", "repository", "localhub", "transcript", "search",
            "dream", "demo", "worker", "serve", "mcp")


class _HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Keeps every command's help on the line of its name (argparse would wrap `repository`)."""

    def __init__(self, prog: str) -> None:
        super().__init__(prog, max_help_position=20, width=100)
        self._action_max_length = 18


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="memrepo",
        description=messages.CLI_DESCRIPTION,
        formatter_class=_HelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"memrepo {__version__}")
    sub = parser.add_subparsers(title="commands", metavar="COMMAND", required=True)
    for name in COMMANDS:
        importlib.import_module(f"bot.commands.{name}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
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
        print(messages.INTERNAL_ERROR.format(error=f"{type(exc).__name__}: {exc}"), file=sys.stderr)
        return 70


if __name__ == "__main__":
    sys.exit(main())
