"""`memrepo palace`: its flags; the palace server process is bot/serve/palace_server.py."""

from __future__ import annotations

import argparse
import math

from bot.commands import texts
from bot.errors import MemrepoError

DEFAULT_PORT = 8780


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("palace", help=texts.PALACE_HELP, description=texts.PALACE_DESCRIPTION,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repo", default=".", metavar="DIR", help=texts.PALACE_REPO_HELP)
    p.add_argument("--host", default="127.0.0.1", metavar="H", help=texts.PALACE_HOST_HELP)
    p.add_argument("--port", default=str(DEFAULT_PORT), metavar="P", help=texts.PALACE_PORT_HELP)
    p.add_argument("--token", metavar="T", help=texts.PALACE_TOKEN_HELP)
    p.add_argument("--home", metavar="DIR", help=texts.PALACE_HOME_HELP)
    p.add_argument("--no-forge", action="store_true", help=texts.PALACE_NO_FORGE_HELP)
    p.add_argument("--poll", default="3", metavar="SECONDS", help=texts.PALACE_POLL_HELP)
    p.set_defaults(func=run)


def port_number(text: str) -> int:
    value = text.strip()
    if not (value.isascii() and value.isdecimal()) or int(value) > 65535:
        raise MemrepoError(f"--port {text} is not a port: use 1-65535, or 0 for any free port")
    return int(value)


def poll_ms(text: str) -> int:
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not 0.5 <= seconds <= 3600:
        raise MemrepoError(f"--poll {text} is not a number of seconds from 0.5 to 3600")
    return round(seconds * 1000)


def run(args: argparse.Namespace) -> int:
    port = port_number(args.port)
    every = poll_ms(args.poll)
    from bot.serve import palace_server

    return palace_server.run(args.repo, args.host.strip(), port, token=args.token, home=args.home,
                             forge=not args.no_forge, poll_ms=every)
