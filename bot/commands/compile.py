"""`memrepo compile`: print the agent's system prompt as the agent would see it now (or, with
`--at DATE`, as it would have seen it then), so a person can check what committed memory puts in
front of the model."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bot.commands import texts
from bot.errors import MemrepoError
from bot.memfs import DEFAULT_MEMORY_DIR


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("compile", help=texts.COMPILE_HELP,
                                   description=texts.COMPILE_HELP)
    parser.add_argument("--repo", metavar="DIR", default=".", help=texts.COMPILE_REPO_HELP)
    parser.add_argument("--system-prompt", metavar="FILE", help=texts.COMPILE_SYSTEM_PROMPT_HELP)
    parser.add_argument("--memory-dir", metavar="TEXT", default=DEFAULT_MEMORY_DIR,
                        help=texts.COMPILE_MEMORY_DIR_HELP)
    parser.add_argument("--at", metavar="DATE", help=texts.COMPILE_AT_HELP)
    parser.set_defaults(func=run)


def read_system_prompt(path: str) -> str:
    """The text of the system prompt file (`-`: standard input), or one line saying why not."""
    try:
        if path == "-":
            return sys.stdin.buffer.read().decode("utf-8")
        return Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        reason = f"not valid UTF-8 (first bad byte at offset {exc.start})"
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
    raise MemrepoError(f"cannot read the system prompt file {path}: {reason}")


def run(args: argparse.Namespace) -> int:
    from bot.memfs import MemoryRepo, PromptCompiler, compile_at, parse_when

    when = parse_when(args.at) if args.at is not None else None
    system_prompt = read_system_prompt(args.system_prompt) if args.system_prompt else ""
    if when is not None:
        print(compile_at(args.repo, when, system_prompt, memory_dir=args.memory_dir)["text"])
        return 0
    repo = MemoryRepo.open(args.repo)
    compiled = PromptCompiler(repo.root, memory_dir=args.memory_dir, repo=repo).compile(system_prompt)
    print(compiled.text)
    return 0
