"""bot/sockets.py: the one TCP bind the servers share."""

from __future__ import annotations

import socket

import pytest

from bot import sockets
from bot.errors import MemrepoError


def test_a_host_name_is_bound_as_the_system_resolves_it() -> None:
    with sockets.listen("localhost", 0) as sock:
        assert sock.proto == socket.IPPROTO_TCP  # asyncio sets TCP_NODELAY only then
        assert sock.getsockname()[0] in ("127.0.0.1", "::1")


def test_a_port_in_use_is_one_line_naming_it() -> None:
    with sockets.listen("127.0.0.1", 0) as taken:
        port = taken.getsockname()[1]
        assert not sockets.is_free("127.0.0.1", port)
        with pytest.raises(MemrepoError, match=rf"^cannot listen on 127\.0\.0\.1:{port}: "):
            sockets.listen("127.0.0.1", port)
    assert sockets.is_free("127.0.0.1", port)


def test_a_host_that_does_not_resolve_is_one_line() -> None:
    with pytest.raises(MemrepoError, match=r"^cannot listen on no-such-host\.invalid:0: ") as caught:
        sockets.listen("no-such-host.invalid", 0)
    assert "\n" not in str(caught.value)


def test_a_port_out_of_range_is_refused_not_wrapped_around() -> None:
    """getaddrinfo takes port 70000 as 70000 % 65536; the one binder refuses it instead."""
    with pytest.raises(MemrepoError, match=r"^cannot listen on 127\.0\.0\.1:70000: port 70000 is not from 0 to 65535$"):
        sockets.listen("127.0.0.1", 70000)
    assert not sockets.is_free("127.0.0.1", -1)
