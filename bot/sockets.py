"""Binding a TCP port, written once: the receiver's listening socket (`memrepo serve`, in
production under gunicorn and `--local` on uvicorn), the MCP server's over HTTP (`memrepo mcp
--http`) and `serve --local`'s look for free ports bind through here.

A host is resolved as the system resolves it (`localhost`, an IPv4 or an IPv6 address), and
the first address it gives is bound. The socket says it is TCP (IPPROTO_TCP): asyncio sets
TCP_NODELAY only on sockets that say so (and accepted sockets inherit it); without it a
keep-alive answer waits ~40 ms on delayed ACKs.
"""

from __future__ import annotations

import errno
import socket

from bot.errors import MemrepoError

# The one TCP bind (bot/sockets.py).
SERVE_CANNOT_BIND = "cannot listen on {host}:{port}: {error}"


def bound(host: str, port: int, *, reuse: bool = True) -> socket.socket:
    """A TCP socket bound to host:port; `reuse`: SO_REUSEADDR first, as the servers (and
    gunicorn) bind. Raises OSError (a host that does not resolve, or a port out of range,
    which getaddrinfo would quietly wrap around, included)."""
    if not 0 <= port <= 65535:
        raise OSError(errno.EINVAL, f"port {port} is not from 0 to 65535")
    family, _, _, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        if reuse:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
    except OSError:
        sock.close()
        raise
    return sock


def listen(host: str, port: int, backlog: int = 128) -> socket.socket:
    """A listening socket (SO_REUSEADDR), or a one-line MemrepoError (port in use, bad host)."""
    sock = None
    try:
        sock = bound(host, port)
        sock.listen(backlog)
    except OSError as exc:
        if sock is not None:
            sock.close()
        raise MemrepoError(SERVE_CANNOT_BIND.format(host=host, port=port,
                                                             error=exc.strerror or str(exc))) from None
    return sock


def free_port(host: str = "127.0.0.1") -> int:
    """A port the system says is free on `host` now (it may be taken by the time it is used)."""
    with bound(host, 0, reuse=False) as sock:
        return int(sock.getsockname()[1])


def is_free(host: str, port: int) -> bool:
    """Whether a server could bind host:port now (as the servers bind: SO_REUSEADDR)."""
    try:
        bound(host, port).close()
    except OSError:
        return False
    return True
