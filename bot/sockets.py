"""Binding a TCP port, written once: the receiver's listening socket (`memrepo serve`, in
production under gunicorn and `--local` on uvicorn) and `serve --local`'s look for free ports
bind through here.

The socket says it is TCP (IPPROTO_TCP): asyncio sets TCP_NODELAY only on sockets that say so
(and accepted sockets inherit it); without it a keep-alive answer waits ~40 ms on delayed ACKs.
An address with a `:` is IPv6.
"""

from __future__ import annotations

import socket

from bot import texts
from bot.errors import MemrepoError


def tcp_socket(host: str) -> socket.socket:
    """An unbound TCP socket of the family `host` is written in."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    return socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)


def bind(sock: socket.socket, host: str, port: int, *, reuse: bool = True) -> None:
    """Bind `sock` to host:port; `reuse`: SO_REUSEADDR first, as the servers (and gunicorn) bind.
    Raises OSError."""
    if reuse:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))


def listen(host: str, port: int, backlog: int) -> socket.socket:
    """A listening socket (SO_REUSEADDR), or a one-line MemrepoError (port in use, bad host)."""
    sock = tcp_socket(host)
    try:
        bind(sock, host, port)
        sock.listen(backlog)
    except OSError as exc:
        sock.close()
        raise MemrepoError(texts.SERVE_CANNOT_BIND.format(host=host, port=port,
                                                          error=exc.strerror or str(exc))) from None
    return sock


def free_port(host: str = "127.0.0.1") -> int:
    """A port the system says is free on `host` now (it may be taken by the time it is used)."""
    with tcp_socket(host) as sock:
        bind(sock, host, 0, reuse=False)
        return int(sock.getsockname()[1])


def is_free(host: str, port: int) -> bool:
    """Whether a server could bind host:port now (as the servers bind: SO_REUSEADDR)."""
    with tcp_socket(host) as sock:
        try:
            bind(sock, host, port)
        except OSError:
            return False
    return True
