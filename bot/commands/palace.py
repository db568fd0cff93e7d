"""`memrepo palace`: a read-only site of one memory in a browser (bot/palace/)."""

from __future__ import annotations

import argparse
import math
import signal

from bot.commands import texts
from bot.errors import MemrepoError
from bot.settings import PALACE_TOKEN, raw

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
        raise MemrepoError(texts.PALACE_BAD_PORT.format(port=text))
    return int(value)


def poll_ms(text: str) -> int:
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not 0.5 <= seconds <= 3600:
        raise MemrepoError(texts.PALACE_BAD_POLL.format(value=text))
    return round(seconds * 1000)


def run(args: argparse.Namespace) -> int:
    import logging

    from bot.palace import gate

    port = port_number(args.port)
    every = poll_ms(args.poll)
    host = args.host.strip()
    token = gate.check_start(host, args.token if args.token is not None else raw(PALACE_TOKEN))

    from bot.palace import server
    from bot.palace.web import create_app

    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # no access log: open pages ask every few seconds
    app = create_app(args.repo, token=token, forge=False if args.no_forge else None, home=args.home, poll_ms=every)
    palace = app.extensions["memrepo_palace"]
    try:
        bound = server.listen(app, host, port)
    except MemrepoError:
        palace.close()
        raise
    url = server.url_of(bound, host)
    print(texts.PALACE_SERVING.format(repo=palace.root, url=url), flush=True)
    if token is not None:
        print(texts.PALACE_SERVING_TOKEN.format(url=url), flush=True)
    signal.signal(signal.SIGTERM, _interrupt)
    server.run(bound, palace.close)
    return 0


def _interrupt(_signum: int, _frame: object) -> None:
    raise KeyboardInterrupt

