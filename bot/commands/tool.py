"""`memrepo tool`: apply one memory tool call from the command line."""

from __future__ import annotations

import argparse
import json
import sys

from bot import messages


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("tool", help=messages.TOOL_HELP,
                       description="Apply one memory tool call, e.g. "
                       "'{\"command\": \"view\", \"path\": \"system\"}'. Exit 1 when refused.")
    p.add_argument("call", metavar="JSON", help="the call as JSON, or - to read it from standard input")
    p.add_argument("--repo", default=".", metavar="DIR")
    p.add_argument("--agent-id", metavar="ID", help="defaults to the repository's memrepo.agentId")
    p.add_argument("--agent-name", metavar="NAME")
    p.add_argument("--no-push", action="store_true", help="commit locally without pushing")
    p.add_argument("--json", action="store_true", help="print the whole result as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from bot.memfs.tool import MemoryTool

    raw = _stdin() if args.call == "-" else args.call
    tool = MemoryTool(args.repo, args.agent_id, args.agent_name, push=not args.no_push)
    result = tool.call(raw)
    if args.json:
        print(json.dumps(result.to_dict(), indent=2, ensure_ascii=False))
    else:
        print(result.message, file=sys.stdout if result.ok else sys.stderr)
        if not result.ok and result.content is not None:
            print(result.content, file=sys.stderr)
    return 0 if result.ok else 1


def _stdin() -> str:
    """Standard input as UTF-8 text. Bytes that are not UTF-8 become lone surrogates, as they do
    in a command-line argument, so the parse refuses them by name instead of the read failing."""
    buffer = getattr(sys.stdin, "buffer", None)  # a test's StringIO has none
    return sys.stdin.read() if buffer is None else buffer.read().decode("utf-8", "surrogateescape")
