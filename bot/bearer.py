"""When a server memrepo starts on an address needs a bearer token, and how long it must be: one
rule for the palace (`memrepo palace`, which shows memory) and the MCP server over HTTP
(`memrepo mcp --http`, which changes it).

On a loopback address only this machine reaches the server, so a token is optional. On any
other address anyone who reaches it could read or change memory, so one is required. A token,
wherever it is given, has at least TOKEN_MIN characters: a short one is guessed in a few
tries and protects nothing. The decisions are pure functions of the address and the token.
"""

from __future__ import annotations

import ipaddress

from bot.errors import MemrepoError

TOKEN_MIN = 16
LOOPBACK_NAMES = ("localhost",)


def is_loopback(host: str) -> bool:
    """Whether `host` (an address or a name, IPv6 with or without brackets) is this machine's
    loopback: 127.0.0.0/8, ::1, localhost and its subdomains (RFC 6761)."""
    name = host.strip().lower().strip("[]")
    if name in LOOPBACK_NAMES or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def required_token(host: str, token: str | None, *, missing: str, short: str) -> str | None:
    """The token a server on `host` requires (None: none, on loopback without one given), or a
    MemrepoError saying `missing` (no token off loopback) or `short` (fewer than TOKEN_MIN
    characters). Blanks around the token are not part of it."""
    token = (token or "").strip() or None
    if token is None:
        if not is_loopback(host):
            raise MemrepoError(missing)
        return None
    if len(token) < TOKEN_MIN:
        raise MemrepoError(short)
    return token
