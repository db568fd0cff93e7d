"""`memrepo demo`: the whole loop on one machine, in a temporary folder."""

from __future__ import annotations

import argparse
from pathlib import Path

from bot import demo


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="run the memrepo story on this machine and check every step",
                       description="Create a remote and a memory repository, edit it as an agent, "
                       "sync with a person's change, compile the prompt and show the history.")
    p.add_argument("--dir", type=Path, metavar="DIR",
                   help="work in DIR and keep it afterwards (default: a temporary folder)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    return demo.run(args.dir)
