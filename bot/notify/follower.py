"""An agent's side of head events: follow the receiver's event stream and keep a memory clone
on the newest `main`.

`HeadSubscriber(root, events_url, token)` runs a background thread that reads
`GET /v1/repos/<owner>/<repo>/events` (server-sent events, bearer token). The token is the
agent's own forge token, the one it uses for git: the receiver asks the forge whether it may
read the repository. Without one given, it is found in bot.agent_credential's order: the identity
`memrepo identity set` recorded, MEMREPO_FORGE_TOKEN, GITHUB_TOKEN, or the password of the clone's `origin`
URL (`https://x-access-token:TOKEN@...`). On each `head`
event for its repository whose sha is not the clone's HEAD it runs `bot.memfs.sync.sync`:
fetch, fast-forward, or replay unpushed local commits onto the new head and push them. Moving
HEAD is what invalidates the compile cache (`PromptCompiler` keys its cache by the HEAD sha),
so the next `compile()` recompiles. Then `on_head(event, new_head)` is called.

The stream drops (restarts, proxies, networks): the thread reconnects with capped exponential
backoff and jitter, sends `Last-Event-ID`, and after every (re)connect syncs once, so a move
made while it was away is caught even if no event says so. The connection is open before that
sync, so a move during it arrives as an event. A refused token (401) or an unserved
repository (404) is logged once, kept in `last_error`, and retried slowly (a rotated token or
a configuration fix then works without restarting the agent). No error ends the thread:
each is counted in `errors` and the newest kept in `last_error`.

The parts that need no network (the SSE decoder, the backoff schedule) are plain functions.
"""

from __future__ import annotations

import codecs
import contextlib
import logging
import os
import random
import re
import socket
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import requests

from bot import agent_credential
from bot.agent_credential import url_token as token_of_url
from bot.backoff import Backoff
from bot.errors import MemrepoError
from bot.memfs import MemoryRepo
from bot.memfs.sync import contains, redact, sync
from bot.notify.events import HeadEvent
from bot.pullrequest import git_token
from bot.settings import AGENT_FORGE_TOKENS, first_value, is_repo_name

# The agent's side (follower.py): a refusal says which token to follow with.
SUBSCRIBER_REFUSED = ("the event stream at {url} refused this agent's token ({status}): follow with the forge token "
                      "of the memory's clone, one that can read the repository ({envs}, or the token in origin's "
                      "URL); retrying every {seconds:g}s")
SUBSCRIBER_NO_TOKEN = ("the event stream at {url} needs this agent's forge token ({status}) and the clone has none: "
                       "set {envs}, or give origin's URL the token (https://x-access-token:TOKEN@...); retrying every "
                       "{seconds:g}s")
SUBSCRIBER_NOT_FOUND = ("the event stream at {url} does not serve this repository, or this agent's forge token "
                        "cannot read it (404): the receiver must serve it (MEMREPO_REPOS) and the forge token of the "
                        "memory's clone must be able to read it; retrying every {seconds:g}s")
SUBSCRIBER_BAD_URL = "the event stream URL must look like http(s)://host/v1/repos/<owner>/<repo>/events, found {url}"
SUBSCRIBER_DROPPED = "the event stream at {url} dropped: {error}"
SUBSCRIBER_EVENT_TOO_LONG = ("ignored an event from {url} with a line or data longer than {limit} characters "
                             "(a head event is under 1 KB): skipped without reading it whole")
SUBSCRIBER_SYNC_FAILED = "could not bring {path} up to date with its remote: {reason}"

log = logging.getLogger("memrepo.notify.subscriber")

BACKOFF_BASE = 0.5
BACKOFF_CAP = 30.0
REFUSED_DELAY = 60.0  # after 401/404: slow retries
CONNECT_TIMEOUT = 10.0
STABLE_SECONDS = 10.0  # a connection that lasted this long resets the backoff schedule
MAX_EVENT_LINE = 64 * 1024  # characters in one line, and in one event's data (a head event is under 1 KB)
READ_SIZE = 16 * 1024  # bytes asked of the socket at a time: a stream is never read whole
READ_TIMEOUT = 60.0  # silence for this long (the server sends a heartbeat every 15 s) means a dead connection

_LINE_END = re.compile("\r\n|\r|\n")

OnHead = Callable[[HeadEvent | None, str | None], Any]
Syncer = Callable[[], str | None]  # brings the clone up to date; its HEAD afterwards (None: not known yet)


# --------------------------------------------------------------------- server-sent events
@dataclass(frozen=True)
class SSEMessage:
    """One dispatched server-sent event. `id` is the last event id in force (the spec's
    "last event ID buffer"), which stays set across events until an `id:` line changes it."""

    event: str
    data: str
    id: str | None = None
    retry: int | None = None


class SSEDecoder:
    """Incremental decoder of a `text/event-stream` (the WHATWG rules): feed it bytes or text
    as they arrive, in any split, and get the events completed so far. Comments (`: ...`,
    heartbeats) are skipped, `data:` lines are joined with newlines, a block without data is
    not an event, and lines end in LF, CRLF or CR.

    Bounded: a line longer than `max_line` characters is never held whole. Its head is
    dropped as soon as it passes the bound, the rest is skipped up to its line end, and the
    event it belonged to is not dispatched; so is an event whose data lines add up to more than
    `max_line`. `too_long` counts the events refused so."""

    def __init__(self, max_line: int = MAX_EVENT_LINE) -> None:
        self._text = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.max_line = max_line
        self._pending: list[str] = []
        self._pending_size = 0
        self._skipping = False  # inside a line already past the bound
        self._spoiled = False  # the event under way lost a line, or grew past the bound
        self._after_cr = False
        self._event = ""
        self._data: list[str] = []
        self._data_size = 0
        self._has_data = False
        self.last_id: str | None = None
        self.retry: int | None = None
        self.too_long = 0

    @property
    def buffered(self) -> int:
        """Characters held for the line and the event under way (never much above 2 x max_line)."""
        return self._pending_size + self._data_size

    def feed(self, chunk: bytes | str) -> list[SSEMessage]:
        text = self._text.decode(chunk) if isinstance(chunk, bytes) else chunk
        if self._after_cr and text:
            self._after_cr = False
            if text.startswith("\n"):
                text = text[1:]
        out: list[SSEMessage] = []
        start = 0
        for end in _LINE_END.finditer(text):
            self._take(text[start:end.start()])
            start = end.end()
            self._after_cr = end.group() == "\r" and start == len(text)  # its LF may come next
            message = self._line_end()
            if message is not None:
                out.append(message)
        self._take(text[start:])
        return out

    def _take(self, piece: str) -> None:
        if self._skipping or not piece:
            return
        if self._pending_size + len(piece) > self.max_line:
            self._pending, self._pending_size, self._skipping = [], 0, True
            return
        self._pending.append(piece)
        self._pending_size += len(piece)

    def _line_end(self) -> SSEMessage | None:
        if self._skipping:
            self._skipping = False
            self._spoil()
            return None
        line = "".join(self._pending)
        self._pending, self._pending_size = [], 0
        return self._line(line)

    def _spoil(self) -> None:
        if not self._spoiled:
            self._spoiled = True
            self.too_long += 1
        self._data, self._data_size = [], 0

    def _line(self, line: str) -> SSEMessage | None:
        if not line:
            return self._dispatch()
        if line.startswith(":"):
            return None
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "event":
            self._event = value
        elif name == "data":
            self._has_data = True
            if self._spoiled or self._data_size + len(value) > self.max_line:
                self._spoil()
            else:
                self._data.append(value)
                self._data_size += len(value) + 1
        elif name == "id":
            if "\0" not in value:
                self.last_id = value
        elif name == "retry" and value.isascii() and value.isdigit():
            self.retry = int(value)
        return None

    def _dispatch(self) -> SSEMessage | None:
        event, data, has_data = self._event or "message", "\n".join(self._data), self._has_data
        spoiled = self._spoiled
        self._event, self._data, self._data_size, self._has_data, self._spoiled = "", [], 0, False, False
        if not has_data or spoiled:
            return None
        return SSEMessage(event=event, data=data, id=self.last_id, retry=self.retry)


def bounded_chunks(response: requests.Response, size: int = READ_SIZE) -> Iterator[bytes]:
    """The body of a streamed response as it arrives, at most `size` bytes at a time (decoded
    as its Content-Encoding says, also at most `size`). requests' iter_content(None) would hand
    over a whole chunk, or the whole body when it is not chunked, however large the sender
    makes it; read1 returns what has arrived, so a small event is not held back either."""
    raw = response.raw
    while True:
        chunk = raw.read1(size)
        if not chunk:
            return
        yield chunk


def parse_sse(chunks: Iterable[bytes | str]) -> Iterator[SSEMessage]:
    """The events of a stream given as chunks (an unterminated last block is not an event)."""
    decoder = SSEDecoder()
    for chunk in chunks:
        yield from decoder.feed(chunk)


# --------------------------------------------------------------------- backoff
def backoff_delay(attempt: int, *, base: float = BACKOFF_BASE, cap: float = BACKOFF_CAP,
                  rand: Callable[[], float] = random.random) -> float:
    """Seconds to wait before reconnect number `attempt` (0 for the first after a drop):
    `base * 2**attempt`, capped at `cap`, of which a random half is jitter ("equal jitter": a
    fleet of agents dropped at once does not reconnect at once, and none waits under half)."""
    if attempt < 0:
        raise ValueError("attempt must be >= 0")
    return Backoff(base, cap=cap, jitter=(0.5, 1.0)).delay(attempt, rand())


def repo_of_url(url: str) -> str:
    """`owner/name` from an events URL `.../v1/repos/<owner>/<name>/events`."""
    parts = urlsplit(url)
    segments = [s for s in parts.path.split("/") if s]
    if (parts.scheme not in ("http", "https") or not parts.netloc or len(segments) < 5
            or segments[-5] != "v1" or segments[-4] != "repos" or segments[-1] != "events"):
        raise MemrepoError(SUBSCRIBER_BAD_URL.format(url=redact(url)))
    repo = f"{segments[-3]}/{segments[-2]}"
    if not is_repo_name(repo):
        raise MemrepoError(SUBSCRIBER_BAD_URL.format(url=redact(url)))
    return repo


def shutdown_response(response: requests.Response | None) -> None:
    """Wake a thread blocked reading `response` (closing alone does not interrupt a recv)."""
    if response is None:
        return
    raw = getattr(response, "raw", None)
    sock = getattr(getattr(raw, "_connection", None), "sock", None)
    if sock is None:
        fp = getattr(getattr(raw, "_fp", None), "fp", None)
        sock = getattr(getattr(fp, "raw", None), "_sock", None)
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)
    try:
        response.close()
    except Exception:  # closing a response another thread is reading may raise anything
        log.debug("closing the event stream failed", exc_info=True)


# --------------------------------------------------------------------- the token
TOKEN_ENVS = AGENT_FORGE_TOKENS


def forge_token(root: Path, environ: Mapping[str, str] | None = None) -> str | None:
    """The agent's forge token for the clone at `root`, in bot.agent_credential's one order (the
    recorded identity, the environment's, its origin's)."""
    env = os.environ if environ is None else environ
    try:
        from bot.memfs.sync import remote_url

        return agent_credential.agent_token(root, env, remote_url(MemoryRepo.open(root)))
    except Exception:  # not a clone (yet): the stream refuses, the subscriber reports it
        return first_value(TOKEN_ENVS, env)


# --------------------------------------------------------------------- the subscriber
class HeadSubscriber:
    """Keeps the memory clone at `repo_root` on the newest `main` announced by the receiver's
    event stream at `events_url` (authenticated with the agent `token`). `start()` it, `stop()`
    it (or use `with`). `on_head(event, new_head)` is called after each head move it made;
    `event` is None when the move was found by the sync after a (re)connect. A `syncer` takes
    the place of `sync` for a caller that does its git work itself (`memrepo follow` wakes its
    own loop, which waits while a harness has uncommitted changes)."""

    def __init__(self, repo_root: str | os.PathLike[str], events_url: str, token: str,
                 on_head: OnHead | None = None, *, syncer: Syncer | None = None, backoff_base: float = BACKOFF_BASE,
                 backoff_cap: float = BACKOFF_CAP, refused_delay: float = REFUSED_DELAY,
                 connect_timeout: float = CONNECT_TIMEOUT, read_timeout: float = READ_TIMEOUT) -> None:
        self.root = Path(repo_root).expanduser().resolve()
        self.url = events_url
        self.repo = repo_of_url(events_url)
        self._token = token or forge_token(self.root) or ""
        self.on_head = on_head
        self._syncer = syncer
        self.backoff_base = backoff_base
        self.backoff_cap = backoff_cap
        self.refused_delay = refused_delay
        self.timeouts = (connect_timeout, read_timeout)
        self.last_event_id: str | None = None
        self.last_error: str | None = None
        self.errors = 0
        self.connects = 0
        self.syncs = 0
        self.moves = 0
        self.connected = threading.Event()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._response: requests.Response | None = None
        self._session = requests.Session()
        self._refused_reported: int | None = None
        self._connected_at: float | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> HeadSubscriber:
        if self._thread is not None and self._thread.is_alive():
            return self
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name=f"memrepo-head-{self.repo}", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """End the thread: wakes it from a wait or a blocked read, then joins it."""
        self._stop.set()
        with self._lock:
            response = self._response
        shutdown_response(response)
        if self._thread is not None:
            self._thread.join(timeout)
        self._session.close()

    @property
    def token(self) -> str:
        """The bearer the stream is opened with: the agent's forge token ("" if none was found)."""
        return self._token

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def __enter__(self) -> HeadSubscriber:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------------ the loop
    def _error(self, message: str, *, once_key: int | None = None, level: int = logging.WARNING) -> None:
        """Count and keep an error; with `once_key`, repeats of that kind (until a connection
        succeeds) are logged at debug level only, so an outage does not flood the log."""
        self.errors += 1
        self.last_error = message
        if once_key is not None:
            if self._refused_reported == once_key:
                log.debug("%s", message)
                return
            self._refused_reported = once_key
        log.log(level, "%s", message)

    def _run(self) -> None:
        attempt = 0
        while not self._stop.is_set():
            delay: float | None = None
            self._connected_at = None
            try:
                delay = self._connect_and_follow()
            except requests.RequestException as exc:
                if self._stop.is_set():  # stop() cut the connection: not an error
                    break
                self._error(SUBSCRIBER_DROPPED.format(url=redact(self.url), error=redact(str(exc))),
                            once_key=0)
            except Exception as exc:  # never die silently: record, back off, go on
                if self._stop.is_set():  # stop() closed the response under the reader: not an error
                    break
                log.exception("head subscriber for %s", self.repo)
                self._error(SUBSCRIBER_DROPPED.format(url=redact(self.url), error=f"{type(exc).__name__}: "
                                                            f"{redact(str(exc))}"))
            finally:
                self.connected.clear()
                with self._lock:
                    response, self._response = self._response, None
                shutdown_response(response)
            if self._stop.is_set():
                break
            if self._connected_at is not None and time.monotonic() - self._connected_at >= STABLE_SECONDS:
                attempt = 0  # a stream that worked for a while: start the schedule again
            if delay is None:
                delay = backoff_delay(attempt, base=self.backoff_base, cap=self.backoff_cap)
                attempt += 1
            self._stop.wait(delay)

    def _connect_and_follow(self) -> float | None:
        """One connection: None when it ended (or failed) in a way that wants the normal
        backoff, or the delay to use instead (refusals)."""
        headers = {"Authorization": f"Bearer {self._token}", "Accept": "text/event-stream",
                   "Cache-Control": "no-cache"}
        seen = self.last_event_id or self._local_head()
        if seen:
            headers["Last-Event-ID"] = seen
        response = self._session.get(self.url, headers=headers, stream=True, timeout=self.timeouts)
        with self._lock:
            self._response = response
        if self._stop.is_set():
            return None
        if response.status_code in (401, 403, 404):
            status = response.status_code
            template = (SUBSCRIBER_NOT_FOUND if status == 404
                        else SUBSCRIBER_REFUSED if self._token else SUBSCRIBER_NO_TOKEN)
            self._error(template.format(url=redact(self.url), status=status, envs=" or ".join(TOKEN_ENVS),
                                        seconds=self.refused_delay), once_key=status, level=logging.ERROR)
            return self.refused_delay
        if response.status_code != 200:
            raise requests.HTTPError(f"the event stream at {redact(self.url)} answered HTTP {response.status_code}")
        self._refused_reported = None
        self.connects += 1
        self._connected_at = time.monotonic()
        self.connected.set()
        self._catch_up()
        decoder = SSEDecoder()
        for chunk in bounded_chunks(response):
            if self._stop.is_set():
                return None
            refused = decoder.too_long
            for message in decoder.feed(chunk):
                self._handle(message)
            if decoder.too_long > refused:
                self._error(SUBSCRIBER_EVENT_TOO_LONG.format(url=redact(self.url), limit=decoder.max_line))
        if not self._stop.is_set():
            self._error(SUBSCRIBER_DROPPED.format(url=redact(self.url), error="the server closed it"))
        return None

    # ------------------------------------------------------------------ events
    def _local_head(self) -> str | None:
        try:
            return MemoryRepo.open(self.root).head_sha()
        except Exception as exc:  # a clone being rewritten, or gone: report, keep the thread
            self._error(SUBSCRIBER_SYNC_FAILED.format(path=self.root, reason=exc))
            return None

    def _holds(self, head: str, sha: str) -> bool:
        """Whether `sha` is `head` or behind it: an event this clone already caught up with
        (events queue up while a sync runs; the sync already fetched the newest main)."""
        try:
            return contains(MemoryRepo.open(self.root), head, sha)
        except Exception:  # unreadable here (a clone being rewritten): let the sync find out
            return False

    def _catch_up(self) -> None:
        before = self._local_head()
        after = self._sync()
        if after is not None and after != before:
            self._notify(None, after)

    def _handle(self, message: SSEMessage) -> None:
        if message.event != "head":
            return
        try:
            event = HeadEvent.from_json(message.data)
        except MemrepoError as exc:
            self._error(f"ignored a head event that is not valid: {exc}")
            return
        if event.repo.lower() != self.repo.lower():
            return
        self.last_event_id = message.id or event.sha
        before = self._local_head()
        if before is not None and self._holds(before, event.sha):
            return
        after = self._sync()
        if after is not None and after != before:
            self._notify(event, after)

    def _sync(self) -> str | None:
        """Sync the clone; its HEAD afterwards (None when it could not be read)."""
        self.syncs += 1
        if self._syncer is not None:
            return self._syncer()
        try:
            repo = MemoryRepo.open(self.root)
            git_token.ensure(repo)  # a recorded GitHub App pushes and fetches as itself
            result = sync(repo)
        except MemrepoError as exc:  # a conflict (local commits set aside), a dirty tree, not on main
            self._error(SUBSCRIBER_SYNC_FAILED.format(path=self.root, reason=exc))
            return self._local_head()
        except Exception as exc:
            log.exception("sync of %s", self.root)
            self._error(SUBSCRIBER_SYNC_FAILED.format(path=self.root, reason=f"{type(exc).__name__}: {exc}"))
            return self._local_head()
        if not result.pushed:  # unreachable remote, refused push: the next event or reconnect tries again
            self._error(SUBSCRIBER_SYNC_FAILED.format(path=self.root, reason=result.reason))
        return self._local_head()

    def _notify(self, event: HeadEvent | None, head: str) -> None:
        self.moves += 1
        log.info("memory at %s moved to %s", self.root, head)
        if self.on_head is None:
            return
        try:
            self.on_head(event, head)
        except Exception as exc:
            log.exception("on_head callback")
            self._error("the on_head callback failed: {error}".format(error=f"{type(exc).__name__}: {exc}"))


__all__ = ["HeadSubscriber", "SSEDecoder", "SSEMessage", "backoff_delay", "bounded_chunks", "forge_token", "parse_sse",
           "repo_of_url", "shutdown_response", "token_of_url"]
