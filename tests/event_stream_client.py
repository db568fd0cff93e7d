"""Open many event streams at once over raw sockets (tests that need more than a few)."""

from __future__ import annotations

import socket


def open_streams(host: str, port: int, repo: str, token: str, count: int, timeout: float = 10.0) -> list[socket.socket]:
    """`count` streams of `repo`, each read up to its `: connected` greeting."""
    opened = []
    for _ in range(count):
        sock = socket.create_connection((host, port), timeout=timeout)
        sock.sendall(f"GET /v1/repos/{repo}/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n\r\n"
                     .encode())
        seen = b""
        while b"connected to" not in seen:
            data = sock.recv(4096)
            if not data:
                raise AssertionError(f"a stream closed before its greeting: {seen[:200]!r}")
            seen += data
        opened.append(sock)
    return opened
