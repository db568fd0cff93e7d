"""`memrepo tool`: apply one memory tool call from the command line."""

from __future__ import annotations

import argparse
import json
import sys

from bot import texts as shared_texts
from bot.commands import texts

TOOL_SOURCE_BAD = "--source takes an external:<what> source, such as external:https://example.com/page; got {value!r}"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("tool", help=texts.TOOL_HELP,
                       description=texts.TOOL_DESCRIPTION)
    p.add_argument("call", metavar="JSON", help=texts.TOOL_CALL_HELP)
    p.add_argument("--repo", default=".", metavar="DIR")
    p.add_argument("--agent-id", metavar="ID", help=texts.AGENT_ID_HELP)
    p.add_argument("--agent-name", metavar="NAME")
    p.add_argument("--no-push", action="store_true", help=texts.TOOL_NO_PUSH_HELP)
    p.add_argument("--conversation", metavar="ID", help=texts.TOOL_CONVERSATION_HELP)
    p.add_argument("--source", metavar="external:URI", action="append", default=[], type=_source,
                   help=texts.TOOL_SOURCE_HELP)
    p.add_argument("--json", action="store_true", help=texts.TOOL_JSON_HELP)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from bot.agent.write_path import WritePath
    from bot.contracts import AGENT_ID, CONVERSATION_ID, check_id
    from bot.memfs import MemoryRepo

    if args.conversation is not None:  # it becomes a trailer, read back by `memrepo why` and dreams
        check_id(args.conversation, "conversation_id")
    raw = _stdin() if args.call == "-" else args.call
    repo = MemoryRepo.open(args.repo)
    writes = WritePath(repo, args.agent_id, args.agent_name, push=not args.no_push,
                       connect_hint=shared_texts.CONNECT_HINT.format(root=repo.root))
    trailers = ((AGENT_ID, writes.agent_id),) + (((CONVERSATION_ID, args.conversation),) if args.conversation else ())
    result = writes.handle(raw, external=tuple(args.source), trailers=trailers, conversation_id=args.conversation)
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


def _source(text: str) -> str:
    if not text.startswith("external:") or len(text) == len("external:"):
        raise argparse.ArgumentTypeError(TOOL_SOURCE_BAD.format(value=text))
    return text
