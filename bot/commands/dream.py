"""`memrepo dream`: run a dream now for one conversation (the manual trigger).

Goes through the same trigger handling as the session's automatic triggers, so a request
made while a dream of the conversation is open is remembered and fires when it closes.
Reading a long conversation draws a progress bar on a terminal (see bot.commands.transcript);
`--json` prints what happened as one JSON document."""

from __future__ import annotations

import argparse
from typing import Any

from bot.commands import texts
from bot.config import DREAM_STRATEGIES
from bot.dream import texts as dream_texts


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("dream", help=texts.DREAM_HELP, description=texts.DREAM_HELP)
    parser.add_argument("--repo", default=".", metavar="DIR", help=texts.DREAM_REPO_HELP)
    parser.add_argument("--agent", metavar="ID", help=texts.DREAM_AGENT_HELP)
    parser.add_argument("--conversation", metavar="ID", help=texts.DREAM_CONVERSATION_HELP)
    parser.add_argument("--strategy", choices=DREAM_STRATEGIES, help=texts.DREAM_STRATEGY_HELP)
    parser.add_argument("--home", metavar="DIR", help=texts.HOME_HELP)
    parser.add_argument("--json", action="store_true", help=texts.DREAM_JSON_HELP)
    parser.set_defaults(func=run)


def outcome_data(agent: str, conversation: str, outcome: Any) -> dict[str, Any]:
    """What `memrepo dream --json` prints for one handled trigger (an EventResult)."""
    result = outcome.result
    provenance = result.provenance if result is not None else None
    return {
        "agent_id": agent,
        "conversation_id": conversation,
        "ran": outcome.ran,
        "trigger": outcome.trigger,
        "status": result.status if result is not None else None,
        "message": outcome.message,
        "dream_id": result.dream_id if result is not None else None,
        "pull_request": None if result is None or result.pr is None else {"number": result.pr, "url": result.url},
        "base_commit": result.base_commit if result is not None else None,
        "sources": list(result.sources) if result is not None else [],
        "provenance": provenance.as_data() if provenance is not None else None,
    }


def run(args: argparse.Namespace) -> int:
    import json

    from bot.commands.transcript import ProgressBars, open_store
    from bot.dream.events import handle_event
    from bot.dream.runner import only_conversation
    from bot.errors import MemrepoError
    from bot.memfs import MemoryRepo, configured_agent_id

    repo = MemoryRepo.open(args.repo)
    agent = args.agent or configured_agent_id(repo)
    if not agent:
        raise MemrepoError(dream_texts.DREAM_NO_AGENT)
    bars = ProgressBars()
    try:
        with open_store(args, bars) as store:
            conversation = args.conversation or only_conversation(store, agent)
            outcome = handle_event(repo, agent, conversation, "manual", home=store.home, store=store,
                                   strategy=args.strategy)
    finally:
        bars.close()
    if args.json:
        print(json.dumps(outcome_data(agent, conversation, outcome), indent=2, ensure_ascii=False))
    else:
        print(outcome.message)
    return 0
