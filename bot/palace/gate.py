"""Who may see the palace of a memory started with `memrepo palace`.

On a loopback address the palace needs no token (only this machine reaches it), but it answers
only requests whose `Host` is a loopback name, so a web page elsewhere cannot read memory by
pointing a name it controls at 127.0.0.1 (DNS rebinding). On any other address a token is
required, and refused when missing or shorter than TOKEN_MIN characters (bot/bearer.py's rule,
which `memrepo mcp --http` shares). With a token, a request is let in when it carries it:

- `Authorization: Bearer <token>` (scripts, `curl -H`), on every request; or
- `?token=<token>` once, in a browser: the answer is a redirect to the same address without the
  token, setting a cookie (HttpOnly, SameSite=Strict) that holds an HMAC of the token under a
  key made when the palace starts, never the token itself. Restarting the palace forgets it.

Tokens are compared in constant time. The decisions are pure functions of the request's parts.

`memrepo serve` shows the palace of every memory it serves to whoever the forge lets read it
(bot/serve/palace.py): there the token is the viewer's own forge token, which the forge is asked
about again when the cached answer expires, so the cookie has to carry the token itself. It is
sealed (`seal`: encrypted and authenticated, Fernet, under a key derived from the receiver's
webhook secret, which every receiver behind a load balancer shares) and lapses after
`SEALED_HOURS`; the browser cannot read it (HttpOnly) nor send it from another site (SameSite).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from dataclasses import dataclass, field

from cryptography.fernet import Fernet, InvalidToken

from bot.access import ALLOWED, BAD_TOKEN, REFUSED
from bot.bearer import TOKEN_MIN, is_loopback, required_token

PALACE_TOKEN_REQUIRED = ("{host} is not a loopback address: anyone who reaches it could read memory, so a token "
                         "is required; pass --token (at least 16 characters, e.g. from `python3 -c 'import secrets; "
                         "print(secrets.token_urlsafe(24))'`) or set MEMREPO_PALACE_TOKEN, or serve on 127.0.0.1")
PALACE_TOKEN_SHORT = "the token is too short: use at least {minimum} characters (a guessable token protects nothing)"

COOKIE = "memrepo_palace"

ALLOW = "allow"
REMEMBER = "remember"  # allowed by ?token=: redirect without it, setting the cookie
REFUSE = "refuse"
WRONG_HOST = "wrong-host"

SEALED_COOKIE = "memrepo_palace_viewer"
SEALED_HOURS = 12
FROM_HEADER, FROM_QUERY, FROM_COOKIE, FROM_NOWHERE = "header", "query", "cookie", "nowhere"


def host_name(header: str) -> str:
    """The name of a `Host` header, without its port: `[::1]:8080` -> `::1`."""
    value = header.strip()
    if value.startswith("["):
        return value[1:value.find("]")] if "]" in value else value[1:]
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


def check_start(host: str, token: str | None) -> str | None:
    """The token to require (None: none), or a MemrepoError saying why the palace cannot start
    on `host` with `token` (bot.bearer's rule, which `memrepo mcp --http` shares)."""
    return required_token(host, token, missing=PALACE_TOKEN_REQUIRED.format(host=host),
                          short=PALACE_TOKEN_SHORT.format(minimum=TOKEN_MIN))


@dataclass(frozen=True)
class Gate:
    """The palace's check of one request; `token` None means loopback without a token."""

    token: str | None = field(repr=False)
    key: bytes = field(default_factory=lambda: secrets.token_bytes(32), repr=False)

    def cookie_value(self) -> str:
        assert self.token is not None
        return hmac.new(self.key, self.token.encode("utf-8"), hashlib.sha256).hexdigest()

    def decide(self, *, host: str, authorization: str | None, query_token: str | None, cookie: str | None) -> str:
        """ALLOW, REMEMBER, REFUSE or WRONG_HOST for a request with these parts."""
        if self.token is None:
            return ALLOW if is_loopback(host_name(host)) else WRONG_HOST
        bearer = (authorization or "").strip()
        if bearer[:7].lower() == "bearer " and _same(bearer[7:].strip(), self.token):
            return ALLOW
        if query_token is not None and _same(query_token, self.token):
            return REMEMBER
        if cookie and _same(cookie, self.cookie_value()):
            return ALLOW
        return REFUSE


def _same(given: str, expected: str) -> bool:
    return hmac.compare_digest(given.encode("utf-8", "surrogatepass"), expected.encode("utf-8"))


# ------------------------------------------------------------------------------ served: the viewer's forge token
def viewer_token(authorization: str | None, query_token: str | None,
                 cookie_token: str | None) -> tuple[str | None, str]:
    """(the viewer's forge token, where it came from): a bearer header first (scripts), then
    ?token= (a browser's first visit), then the sealed cookie (already unsealed)."""
    scheme, _, value = (authorization or "").strip().partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip(), FROM_HEADER
    if query_token and query_token.strip():
        return query_token.strip(), FROM_QUERY
    if cookie_token:
        return cookie_token, FROM_COOKIE
    return None, FROM_NOWHERE


def served_status(verdict: str | None) -> int:
    """The HTTP status a served palace answers for the access check's verdict (None: no token):
    as the event stream answers, 404 for a memory not served or not readable with the token
    (GitHub's answer for a private repository one cannot see), 401 for no token or one the forge
    does not accept, 503 when the forge could not be asked."""
    if verdict is None or verdict == BAD_TOKEN:
        return 401
    return {ALLOWED: 200, REFUSED: 404}.get(verdict, 503)


def sealing_key(secret: str) -> bytes:
    """The cookie's key, derived from the receiver's webhook secret (never the secret itself)."""
    digest = hmac.new(secret.encode("utf-8"), b"memrepo palace viewer cookie", hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest)


def seal(key: bytes, token: str) -> str:
    return Fernet(key).encrypt(token.encode("utf-8")).decode("ascii")


def unseal(key: bytes, value: str | None, *, now: int | None = None) -> str | None:
    """The token a sealed cookie holds; None when there is none, it was not sealed with `key`
    (another receiver's secret, a forged or damaged value) or it is older than SEALED_HOURS."""
    if not value:
        return None
    try:
        if now is None:
            return Fernet(key).decrypt(value.encode("ascii"), ttl=SEALED_HOURS * 3600).decode("utf-8")
        return Fernet(key).decrypt_at_time(value.encode("ascii"), SEALED_HOURS * 3600, now).decode("utf-8")
    except (InvalidToken, UnicodeError, ValueError):
        return None
