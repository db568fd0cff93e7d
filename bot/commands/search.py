"""`memrepo search QUERY`: BM25 search over agent transcripts; `--context` re-ranks with the
neighbouring turns and the dates the query names (bench/locomo.py measures both)."""

from __future__ import annotations

import argparse
import json
from functools import partial

from bot.commands import texts
from bot.commands.transcript import add_home, open_store
from bot.texts import Text

SEARCH_RESULT = Text("{rank}. score {score:.4f}  {time:when}  {agent}/{conversation}  {kind} ({source})  {message_id}")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("search", help=texts.SEARCH_HELP, description=texts.SEARCH_HELP)
    parser.add_argument("query", metavar="QUERY", help=texts.SEARCH_QUERY_HELP)
    parser.add_argument("--agent", metavar="AGENT", help=texts.SEARCH_AGENT_HELP)
    parser.add_argument("--conversation", metavar="ID", help=texts.SEARCH_CONVERSATION_HELP)
    parser.add_argument("--kind", action="append", metavar="KIND", help=texts.SEARCH_KIND_HELP)
    parser.add_argument("--source", action="append", metavar="SOURCE",
                        help=texts.SEARCH_SOURCE_HELP)
    parser.add_argument("--since", metavar="ISO", help=texts.SEARCH_SINCE_HELP)
    parser.add_argument("--until", metavar="ISO", help=texts.SEARCH_UNTIL_HELP)
    parser.add_argument("-k", type=int, default=10, metavar="N", help=texts.SEARCH_K_HELP)
    parser.add_argument("--json", action="store_true", help=texts.SEARCH_JSON_HELP)
    parser.add_argument("--context", action="store_true", help=texts.SEARCH_CONTEXT_HELP)
    add_home(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from bot.transcript.retrieval import search_in_context

    with open_store(args) as store:
        search = partial(search_in_context, store) if args.context else store.search
        hits = search(args.query, agent=args.agent, conversation=args.conversation, kinds=args.kind,
                      sources=args.source, since=args.since, until=args.until, k=args.k)
    if args.json:
        print(json.dumps([hit.to_dict() for hit in hits], ensure_ascii=False, indent=2))
        return 0
    if not hits:
        print(f"no messages match {args.query!r}")
        return 0
    for rank, hit in enumerate(hits, 1):
        if rank > 1:
            print()
        print(SEARCH_RESULT.format(
            rank=rank, score=hit.score, time=hit.captured_at, agent=hit.agent_id, conversation=hit.conversation_id,
            kind=hit.kind, source=hit.source, message_id=hit.message_id))
        print(f"   {hit.snippet}")
    return 0
