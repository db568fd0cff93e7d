"""`memrepo dream`: run a dream now for one conversation (the manual trigger).

Goes through the same trigger handling as the session's automatic triggers, so a request
made while a dream of the conversation is open is remembered and fires when it closes."""

from __future__ import annotations

import argparse

from bot import messages
from bot.config import DREAM_STRATEGIES


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("dream", help=messages.DREAM_HELP, description=messages.DREAM_HELP)
    parser.add_argument("--repo", default=".", metavar="DIR", help=messages.DREAM_REPO_HELP)
    parser.add_argument("--agent", metavar="ID", help=messages.DREAM_AGENT_HELP)
    parser.add_argument("--conversation", metavar="ID", help=messages.DREAM_CONVERSATION_HELP)
    parser.add_argument("--strategy", choices=DREAM_STRATEGIES, help=messages.DREAM_STRATEGY_HELP)
    parser.add_argument("--home", metavar="DIR", help=messages.HOME_HELP)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from bot.commands.transcript import open_store
    from bot.dream.events import handle_event
    from bot.dream.runner import only_conversation
    from bot.errors import MemrepoError
    from bot.memfs.repo import MemoryRepo
    from bot.memfs.tool import AGENT_ID_KEY

    repo = MemoryRepo.open(args.repo)
    agent = args.agent or repo.get_config(AGENT_ID_KEY)
    if not agent:
        raise MemrepoError(messages.DREAM_NO_AGENT)
    with open_store(args) as store:
        conversation = args.conversation or only_conversation(store, agent)
        outcome = handle_event(repo, agent, conversation, "manual", home=store.home, store=store,
                               strategy=args.strategy)
    print(outcome.message)
    return 0
