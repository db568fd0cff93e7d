"""The palace server process (`memrepo palace`): one memory's read-only site (bot/palace/web.py)
on werkzeug's threaded server (bot/palace/server.py), until Ctrl-C or SIGTERM.

Off the loopback it needs a token (bot/palace/gate.py): `token`, else MEMREPO_PALACE_TOKEN.
The palaces the receiver serves for every memory of an integrator are bot/serve/palace.py's.
"""

from __future__ import annotations

import logging
import signal
from pathlib import Path

from bot.errors import MemrepoError
from bot.settings import PALACE_TOKEN, raw

# The palace server (palace_server.py).
PALACE_SERVING = "memrepo palace: {repo} at {url} (read-only; Ctrl-C stops)"
PALACE_SERVING_TOKEN = "  open {url}?token=<the token> once in a browser, or send 'Authorization: Bearer <the token>'"


def run(repo: str | Path, host: str, port: int, *, token: str | None = None, home: str | None = None,
        forge: bool = True, poll_ms: int = 3000) -> int:
    """Serve `repo`'s palace on host:port (0: a free port) and say where; `forge` False: no
    forge is asked about pull requests; `poll_ms`: how often an open page asks for news."""
    from bot.palace import gate, server
    from bot.palace.web import create_app

    token = gate.check_start(host, token if token is not None else raw(PALACE_TOKEN))
    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # no access log: open pages ask every few seconds
    app = create_app(repo, token=token, forge=None if forge else False, home=home, poll_ms=poll_ms)
    palace = app.extensions["memrepo_palace"]
    try:
        bound = server.listen(app, host, port)
    except MemrepoError:
        palace.close()
        raise
    url = server.url_of(bound, host)
    print(PALACE_SERVING.format(repo=palace.root, url=url), flush=True)
    if token is not None:
        print(PALACE_SERVING_TOKEN.format(url=url), flush=True)
    signal.signal(signal.SIGTERM, _interrupt)
    server.run(bound, palace.close)
    return 0


def _interrupt(_signum: int, _frame: object) -> None:
    raise KeyboardInterrupt
