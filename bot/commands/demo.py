"""`memrepo demo`: the whole loop on the embedded default, every step checked."""

from __future__ import annotations

import argparse
from pathlib import Path

from bot.commands import texts


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help=texts.DEMO_HELP, description=texts.DEMO_DESCRIPTION)
    p.add_argument("--keep", type=Path, metavar="DIR", help=texts.DEMO_KEEP_HELP)
    p.add_argument("--json", action="store_true", help=texts.DEMO_JSON_HELP)
    p.add_argument("--layout", choices=("v1", "v2"), default="v1", help=texts.DEMO_LAYOUT_HELP)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from bot import demo

    return demo.run(args.keep, as_json=args.json, layout=args.layout)
