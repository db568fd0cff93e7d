"""Who may follow which memory: the forge decides, the receiver remembers for a while.

An agent opens a memory's event stream with the forge token it already uses for git. Whether
that token may read the repository is GitHub's own answer to `GET /repos/{owner}/{repo}` with
it: 200 yes; 404 (or 403) no, as GitHub answers for a private repository a token cannot see;
401 the token itself is not valid. So the forge's permissions (collaborators, teams, App
installations, token scopes) decide who follows what, and revoking a person's access on the
forge reaches their agents' streams within the cache's lifetime.

Answers are cached (`ttl`, at most five minutes, refusals too, so a fleet of agents
reconnecting after a receiver restart costs one forge request per token and repository, and a
refused token cannot make the receiver hammer the forge), in a bounded LRU (`max_entries`), by
a hash of the token, never the token itself. A forge that cannot be asked (a timeout, a 5xx,
a rate limit) is not an answer: nothing is cached and the caller says "try again".

With the integrator's own token (`integrator_token`), a repository is served only when the
integrator can read it too: a repository of which the integrator knows nothing is a 404
whatever the agent's token can read.

The receiver's event stream (webhooks/streams/endpoint.py) imports this module for its verdicts
(`ALLOWED`, `BAD_TOKEN`, `REFUSED`, `UNAVAILABLE`) but builds no check: `bot/serve` builds a
`ForgeAccess` and hands its `check` and `cached` to the stream, so a test or another forge can
hand it another check. The webhook intake (webhooks/intake/) does not use it.
"""

from __future__ import annotations

import hashlib
import logging
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import quote

import requests

from bot.settings import is_repo_name

# The cache of the forge's access verdicts (bot/access.py), as a server configures it.
ACCESS_BAD_TTL = "ttl must be in (0, {limit:g}] seconds, found {ttl!r}"

log = logging.getLogger("memrepo.access")

ALLOWED = "allowed"  # the token can read the repository, and the repository is served
REFUSED = "refused"  # 404 / 403: not served, not there, or not readable with this token (answered 404)
BAD_TOKEN = "bad-token"  # 401 from the forge: the token is not valid (answered 401)
UNAVAILABLE = "unavailable"  # the forge could not be asked (answered 503, not cached)
VERDICTS = (ALLOWED, REFUSED, BAD_TOKEN, UNAVAILABLE)

DEFAULT_TTL = 300.0  # seconds; GitHub's permissions are honoured at most this late
MAX_TTL = 300.0
DEFAULT_MAX_ENTRIES = 100_000
TIMEOUT = (3.05, 5.0)


_TOKEN = re.compile(r"[\x21-\x7e]+")  # what a bearer token can be: visible ASCII, no spaces


def verdict_of_status(status: int) -> str:
    """The verdict a forge's answer to `GET /repos/{owner}/{repo}` gives (pure)."""
    if 200 <= status < 300:
        return ALLOWED
    if status == 401:
        return BAD_TOKEN
    if status in (403, 404):
        return REFUSED
    return UNAVAILABLE


@dataclass(frozen=True)
class _Entry:
    verdict: str
    expires: float


class VerdictCache:
    """A bounded, thread-safe cache of verdicts that expire `ttl` seconds after they were
    learnt (by `clock`, injectable so tests need not wait). The least recently used entry goes
    first when it is full."""

    def __init__(self, ttl: float = DEFAULT_TTL, max_entries: int = DEFAULT_MAX_ENTRIES,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if not 0 < ttl <= MAX_TTL:
            raise ValueError(ACCESS_BAD_TTL.format(limit=MAX_TTL, ttl=ttl))
        if max_entries < 1:
            raise ValueError(f"max_entries must be at least 1, found {max_entries!r}")
        self.ttl = ttl
        self.max_entries = max_entries
        self.clock = clock
        self._entries: OrderedDict[tuple[str, str], _Entry] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[str, str]) -> str | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            if entry.expires <= self.clock():
                del self._entries[key]
                return None
            self._entries.move_to_end(key)
            return entry.verdict

    def put(self, key: tuple[str, str], verdict: str) -> None:
        if verdict == UNAVAILABLE:
            return
        with self._lock:
            self._entries[key] = _Entry(verdict, self.clock() + self.ttl)
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)

    def __len__(self) -> int:
        return len(self._entries)


def token_key(token: str) -> str:
    """What the cache keeps of a token: its SHA-256, so a heap dump holds no credential."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


class ForgeAccess:
    """`check(token, repo)` asks the forge at `api_url` (cached); `cached(token, repo)` answers
    from the cache alone (None: not known, or expired). `token=None` asks only whether the
    repository is served (the operator's streams)."""

    def __init__(self, api_url: str, *, integrator_token: str | None = None, ttl: float = DEFAULT_TTL,
                 max_entries: int = DEFAULT_MAX_ENTRIES, clock: Callable[[], float] = time.monotonic,
                 timeout: tuple[float, float] = TIMEOUT, session: requests.Session | None = None) -> None:
        self.api_url = api_url.rstrip("/")
        self._integrator = integrator_token or None
        self.cache = VerdictCache(ttl, max_entries, clock)
        self.timeout = timeout
        self._session = session or requests.Session()
        self.asked = 0  # requests made to the forge (for tests and benchmarks)

    def _ask(self, token: str, repo: str) -> str:
        owner, _, name = repo.partition("/")
        url = f"{self.api_url}/repos/{quote(owner, safe='')}/{quote(name, safe='')}"
        self.asked += 1
        try:
            resp = self._session.get(url, timeout=self.timeout, allow_redirects=False, headers={
                "Authorization": f"Bearer {token}", "Accept": "application/vnd.github+json",
                "X-GitHub-Api-Version": "2022-11-28"})
        except requests.RequestException as exc:
            log.warning("cannot ask %s whether a token may read %s: %s", self.api_url, repo, type(exc).__name__)
            return UNAVAILABLE
        verdict = verdict_of_status(resp.status_code)
        if resp.status_code == 403 and resp.headers.get("X-RateLimit-Remaining") == "0":
            verdict = UNAVAILABLE  # GitHub's rate limit, not a refusal: do not remember it
        resp.close()
        return verdict

    def _verdict(self, key: tuple[str, str], token: str, repo: str) -> str:
        known = self.cache.get(key)
        if known is not None:
            return known
        verdict = self._ask(token, repo)
        self.cache.put(key, verdict)
        return verdict

    def served(self, repo: str) -> str:
        """Whether the integrator serves `repo`: ALLOWED when it has no token of its own to ask
        with (every repository that sends signed deliveries is served)."""
        if self._integrator is None:
            return ALLOWED
        verdict = self._verdict(("integrator", repo.lower()), self._integrator, repo)
        return REFUSED if verdict == BAD_TOKEN else verdict

    def check(self, token: str | None, repo: str) -> str:
        """The verdict for `token` reading `repo` (blocking: may ask the forge twice). A token
        that cannot be one (anything but visible ASCII) is refused without asking: it could not
        even be sent in a header."""
        if not is_repo_name(repo):
            return REFUSED
        if token is not None and not _TOKEN.fullmatch(token):
            return BAD_TOKEN
        served = self.served(repo)
        if served != ALLOWED or token is None:
            return served
        return self._verdict((token_key(token), repo.lower()), token, repo)

    def cached(self, token: str | None, repo: str) -> str | None:
        """The verdict the cache holds now, without asking anyone (None: ask with `check`)."""
        if self._integrator is not None:
            served = self.cache.get(("integrator", repo.lower()))
            if served is None:
                return None
            if served != ALLOWED:
                return REFUSED
        if token is None:
            return ALLOWED
        return self.cache.get((token_key(token), repo.lower()))

    def close(self) -> None:
        self._session.close()


__all__ = ["ALLOWED", "BAD_TOKEN", "REFUSED", "UNAVAILABLE", "VERDICTS", "ForgeAccess", "VerdictCache",
           "token_key", "verdict_of_status"]
