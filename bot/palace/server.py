"""Running the palace: a threaded WSGI server on one address until interrupted."""

from __future__ import annotations

import socket
import sys
from collections.abc import Callable
from typing import Any

from werkzeug.serving import BaseWSGIServer, make_server

from bot.errors import MemrepoError

PALACE_CANNOT_LISTEN = "cannot listen on {host}:{port} ({problem}); choose another --port or --host"


def listen(app: Any, host: str, port: int) -> BaseWSGIServer:
    """A server bound to host:port (0: a free port), not yet serving. The socket is bound here,
    so an address that cannot be used is one MemrepoError (werkzeug would print and exit)."""
    name = host.strip("[]")
    try:
        family = socket.getaddrinfo(name, port, type=socket.SOCK_STREAM)[0][0]
        sock = socket.create_server((name, port), family=family)
    except (OSError, ValueError, OverflowError) as exc:
        problem = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        raise MemrepoError(PALACE_CANNOT_LISTEN.format(host=host, port=port, problem=problem)) from None
    try:
        return make_server(name, sock.getsockname()[1], app, threaded=True, fd=sock.fileno())
    finally:
        sock.close()  # the server holds its own copy of the socket


def url_of(server: BaseWSGIServer, host: str) -> str:
    shown = f"[{host}]" if ":" in host and not host.startswith("[") else host
    return f"http://{shown}:{server.socket.getsockname()[1]}/"


def run(server: BaseWSGIServer, on_stop: Callable[[], None] | None = None) -> None:
    """Serve until Ctrl-C (or SIGTERM, which the command turns into one); `on_stop` runs then."""
    try:
        server.serve_forever()  # werkzeug's returns on KeyboardInterrupt
    finally:
        server.server_close()
        if on_stop is not None:
            on_stop()
        print("memrepo palace: stopped", file=sys.stderr)
