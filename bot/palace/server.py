"""Running the palace: a threaded WSGI server on one address until interrupted."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from werkzeug.serving import BaseWSGIServer, make_server

from bot import messages
from bot.errors import MemrepoError


def listen(app: Any, host: str, port: int) -> BaseWSGIServer:
    """A server bound to host:port (0: a free port), not yet serving."""
    try:
        return make_server(host, port, app, threaded=True)
    except (OSError, SystemExit, ValueError) as exc:  # werkzeug exits when the port is taken
        problem = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        raise MemrepoError(messages.PALACE_CANNOT_LISTEN.format(host=host, port=port, problem=problem)) from None


def url_of(server: BaseWSGIServer, host: str) -> str:
    shown = f"[{host}]" if ":" in host and not host.startswith("[") else host
    return f"http://{shown}:{server.server_port}/"


def run(server: BaseWSGIServer, on_stop: Callable[[], None] | None = None) -> None:
    """Serve until Ctrl-C or SIGTERM's KeyboardInterrupt; `on_stop` runs either way."""
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print(messages.PALACE_STOPPED, file=sys.stderr)
    finally:
        server.server_close()
        if on_stop is not None:
            on_stop()
