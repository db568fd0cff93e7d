"""`memrepo dream`: run a dream now for one conversation (the manual trigger).

Goes through the same trigger handling as the session's automatic triggers, so a request
made while a dream of the conversation is open is remembered and fires when it closes.
Reading a long conversation draws a progress bar on a terminal (see bot.commands.transcript);
`--json` prints what happened as one JSON document."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from bot.commands import texts
from bot.config import DREAM_STRATEGIES
from bot.dream import texts as dream_texts


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("dream", help=texts.DREAM_HELP, description=texts.DREAM_HELP)
    parser.add_argument("--repo", default=".", metavar="DIR", help=texts.DREAM_REPO_HELP)
    parser.add_argument("--agent", metavar="ID", help=texts.DREAM_AGENT_HELP)
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--conversation", metavar="ID", help=texts.DREAM_CONVERSATION_HELP)
    which.add_argument("--all", action="store_true", help=texts.DREAM_ALL_HELP)
    parser.add_argument("--transcripts", metavar="DIR", help=texts.DREAM_TRANSCRIPTS_HELP)
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
    """Import what the harness wrote, then dream: the named (or only) conversation, or with
    --all each of the agent's. The import's own step and compaction events are counted with
    the request, so one dream per conversation covers them; with --all a conversation that
    fails is said and the others go on (exit 1)."""
    import json

    from bot.commands.transcript import ProgressBars, open_store
    from bot.dream.events import events_by_conversation, fire, handle_events, import_letta, memory_agents
    from bot.dream.runner import only_conversation
    from bot.errors import MemrepoError
    from bot.memfs import MemoryRepo, configured_agent_id

    repo = MemoryRepo.open(args.repo)
    agent = args.agent or configured_agent_id(repo)
    if not agent:
        raise MemrepoError(dream_texts.DREAM_NO_AGENT)
    imported = import_letta(args.home, args.transcripts)  # what the harness wrote a moment ago
    for line in imported.lines:
        print(line, file=sys.stderr if args.json else sys.stdout)
    bars = ProgressBars()
    try:
        with open_store(args, bars) as store:
            wanted = store.conversations(agent) if args.all else \
                [args.conversation or only_conversation(store, agent)]
            run = {"store": store, "strategy": args.strategy}
            if args.all:
                done = fire(repo, imported, store.home, {(agent, c): ["manual"] for c in wanted}, **run)
                outcomes = [(c, done.outcomes[(agent, c)]) for c in wanted if (agent, c) in done.outcomes]
                failed = done.failures
            else:
                [conversation] = wanted
                events = events_by_conversation(imported.written, memory_agents(repo) | {agent})
                new = events.pop((agent, conversation), [])
                outcomes = [(conversation, handle_events(repo, agent, conversation, [*new, "manual"],
                                                               home=store.home, **run))]
                imported.written = [m for m in imported.written if (m.agent_id, m.conversation_id) in events]
                failed = fire(repo, imported, store.home, **run).failures  # the other conversations' triggers
    finally:
        bars.close()
    if args.json:
        data = [outcome_data(agent, c, outcome) for c, outcome in outcomes]
        print(json.dumps(data if args.all else data[0], indent=2, ensure_ascii=False))
    else:
        for _, outcome in outcomes:
            print(outcome.message)
    for line in failed:
        print(line, file=sys.stderr)
    return 1 if failed and args.all else 0
