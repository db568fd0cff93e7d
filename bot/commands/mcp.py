"""`memrepo mcp`: serve a memory to MCP clients (stdio, or streamable HTTP with --http PORT).

The MCP SDK is imported when the command runs, not when the parser is built, so other commands
do not pay for it."""

from __future__ import annotations

import argparse
import logging
import sys

from bot.commands import texts
from bot.errors import MemrepoError
from bot.memfs import DEFAULT_MEMORY_DIR
from bot.settings import AGENT_TOKEN, raw


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("mcp", help=texts.MCP_HELP, description=texts.MCP_DESCRIPTION,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo", metavar="DIR", default=".", help=texts.MCP_REPO_HELP)
    parser.add_argument("--http", type=int, metavar="PORT", help=texts.MCP_HTTP_HELP)
    parser.add_argument("--host", default="127.0.0.1", help=texts.MCP_HOST_HELP)
    parser.add_argument("--agent-id", metavar="ID", help=texts.AGENT_ID_HELP)
    parser.add_argument("--agent-name", metavar="NAME")
    parser.add_argument("--no-push", action="store_true", help=texts.MCP_NO_PUSH_HELP)
    parser.add_argument("--conversation", metavar="ID", help=texts.MCP_CONVERSATION_HELP)
    parser.add_argument("--claude-code", action="store_true", help=texts.MCP_CLAUDE_CODE_HELP)
    parser.add_argument("--codex", action="store_true", help=texts.MCP_CODEX_HELP)
    parser.add_argument("--record", action="store_true", help=texts.MCP_RECORD_HELP)
    parser.add_argument("--background-dreams", action="store_true", help=texts.MCP_BACKGROUND_DREAMS_HELP)
    parser.add_argument("--home", metavar="DIR", help=texts.HOME_HELP)
    parser.add_argument("--system-prompt", metavar="FILE", help=texts.MCP_SYSTEM_PROMPT_HELP)
    parser.add_argument("--memory-dir", metavar="TEXT", default=DEFAULT_MEMORY_DIR,
                        help=texts.COMPILE_MEMORY_DIR_HELP)
    parser.add_argument("--events", metavar="URL", help=texts.MCP_EVENTS_HELP)
    parser.add_argument("--poll", type=float, default=None, metavar="SECONDS", help=texts.MCP_POLL_HELP)
    parser.add_argument("-v", "--verbose", action="store_true", help=texts.MCP_VERBOSE_HELP)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from bot.commands.compile import read_system_prompt
    from bot.mcp import transports
    from bot.mcp.head import POLL_SECONDS
    from bot.mcp.server import MemoryServer, Options

    logging.basicConfig(stream=sys.stderr, level=logging.INFO if args.verbose else logging.WARNING,
                        format="memrepo mcp: %(name)s: %(message)s")
    poll = POLL_SECONDS if args.poll is None else args.poll
    if not poll > 0:
        raise MemrepoError(texts.BAD_POLL.format(poll=args.poll))
    # The event stream's bearer: the agent's forge token (HeadSubscriber finds it as git does:
    # MEMREPO_FORGE_TOKEN, GITHUB_TOKEN or origin's URL), or an operator's MEMREPO_AGENT_TOKEN.
    token = raw(AGENT_TOKEN) or ""
    http_token = None
    if args.http is not None:  # before anything is opened: a non-loopback address needs a token
        http_token = transports.require_token(args.host, raw(transports.TOKEN_ENV))
    options = Options(repo=args.repo, agent_id=args.agent_id, agent_name=args.agent_name, home=args.home,
                      system_prompt=read_system_prompt(args.system_prompt) if args.system_prompt else "",
                      memory_dir=args.memory_dir, push=not args.no_push, poll_seconds=poll,
                      conversation=args.conversation, claude_code=args.claude_code, codex=args.codex,
                      record=args.record,
                      background_dreams=args.background_dreams,
                      events_url=args.events or None, agent_token=(token or None) if args.events else None)
    app = MemoryServer(options)  # with --events, its agent session follows the head events (one subscriber)
    try:
        sock = transports.listen(args.host, args.http) if args.http is not None else None
    except MemrepoError:
        app.close()
        raise
    try:
        if sock is not None:
            transports.serve_http(app, sock, args.host, http_token)
        else:
            print(f"memrepo mcp: serving {app.root} over stdio", file=sys.stderr, flush=True)
            transports.serve_stdio(app)
    finally:
        app.close()
        if sock is not None:
            sock.close()
    return 0
