"""The palace of every memory the receiver serves, at `/palace/<owner>/<repo>/` (the pages of
`memrepo palace`, bot/palace/web.py), for whoever the forge lets read that memory.

Who may see a memory is decided as for its event stream (webhooks/streams/endpoint.py), by the same
access check (bot/access.py: the viewer's own forge token asked of the forge, the answer cached
for at most five minutes, refusals too): a memory the integrator does not serve, or that the
token cannot read, is a 404 (GitHub's answer for a private repository one cannot see), a token
the forge does not accept a 401, a forge that cannot be asked a 503; the operator token opens
any served memory. A script sends `Authorization: Bearer <token>`; a browser opens a page once
with `?token=<token>` and is sent to the same page without it, with the token in a sealed
cookie (bot/palace/gate.py), so a viewer whose access is revoked on the forge is refused within
the cache's lifetime.

What the pages show is read from the receiver's own clone of each memory under the work folder
(`<work>/.palace/<owner>/<name>`: no checkout, every page reads git objects; the integrator's
workspace is a bare mirror whose refs its jobs delete and fetch again, and in a deployment
the receiver and the workers need not share a disk), fetched from the forge with the
integrator's credentials. It is fetched when main moved: the newest head event of the memory
(Redis, what its event stream sends agents) names main's commit, and a clone that is not there
fetches once before the page is read; with no event known it fetches at most every
`FETCH_SECONDS`. An open page follows the memory's event stream at `/palace/<owner>/<repo>/events`
(the agents' stream, answered by the receiver with the token its cookie holds, `stream_token`)
and asks `head.json` (the same check) when a head event arrives, so it shows a merge moments
after its head event; where the stream cannot be kept it asks every few seconds instead.
"""

from __future__ import annotations

import contextlib
import http.cookies
import logging
import threading
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pygit2
from flask import Flask, Response, g, redirect
from redis import Redis
from redis.exceptions import RedisError

from bot.access import ALLOWED, BAD_TOKEN, REFUSED
from bot.errors import MemrepoError
from bot.file_lock import folder_lock
from bot.integrator.context import Remote
from bot.memfs import MAIN, refs
from bot.memfs.sync import REMOTE, TRACKING_REF, fetch_from, redact
from bot.notify.publisher import last_head
from bot.palace import gate, web
from bot.palace.source import Palace
from bot.settings import Settings, is_repo_name
from webhooks.asgi import PALACE_PATH
from webhooks.streams.endpoint import AccessCheck

# The served palace (palace.py): who may see which memory.
PALACE_SERVED_NO_TOKEN = ("this memory's palace is shown to whoever the forge lets read {repo}: open this address "
                          "once with ?token=<your forge token>, or send 'Authorization: Bearer <your forge token>'")
PALACE_SERVED_BAD_TOKEN = "the forge does not accept this token (401): use a forge token that can read {repo}"
PALACE_SERVED_NO_ACCESS = "{repo} is not a memory this server serves, or this token cannot read it"
PALACE_SERVED_UNAVAILABLE = ("the forge could not be asked whether this token may read {repo}; try again in a few "
                             "seconds")
PALACE_SERVED_NO_REDIS = ("cannot tell whether {repo} is a memory this integrator serves (Redis is not reachable); "
                          "try again shortly")
PALACE_SERVED_NOT_INTEGRATED = ("{repo} is not a memory this integrator has seen a push to: its palace is shown once a "
                                "push to its main reaches the integrator (or once MEMREPO_REPOS names it)")
PALACE_SERVED_FETCH_FAILED = "{repo}'s memory could not be fetched from the forge ({problem}); try again shortly"
PALACE_SERVED_NOT_FETCHED = "{repo}'s memory could not be fetched from the forge yet; try again shortly"

log = logging.getLogger("memrepo.serve.palace")

FETCH_SECONDS = 30.0  # with no head event known, a clone is fetched at most this often
_SHOWN = "refs/memrepo/shown"  # main's last commit while main is fetched anew: the fetch sends only what is new
RETRY_SECONDS = 5.0  # a fetch that failed is not tried again sooner
_ORIGIN = f"remote.{REMOTE}.url"
FOLDER = ".palace"  # under the work folder; no owner's name starts with a dot


# ------------------------------------------------------------------------------ the pure decision
def should_fetch(head: str | None, newest: str | None, fetched_for: str | None, since_fetch: float | None,
                 failed: bool, *, every: float = FETCH_SECONDS, retry: float = RETRY_SECONDS) -> bool:
    """Whether to fetch main before showing a page. `head`: the clone's main (None: nothing
    fetched yet); `newest`: the sha of the newest head event (None: none known); `fetched_for`:
    the newest event's sha when the clone was last fetched; `since_fetch`: seconds since the
    last attempt (None: never); `failed`: whether that attempt failed."""
    if failed and since_fetch is not None and since_fetch < retry:
        return False
    if head is None:
        return True
    if newest is not None and newest != head and newest != fetched_for:
        return True
    return since_fetch is None or since_fetch >= every


# ------------------------------------------------------------------------------ one memory's clone
class Clone:
    """The receiver's clone of one memory (non-bare, never checked out), main fetched from the
    forge. A file lock keeps two receiver processes on one machine from fetching it at once."""

    def __init__(self, path: Path, repo: str, remote: Remote, branch: str = MAIN) -> None:
        self.path = path
        self.repo = repo
        self.remote = remote
        self.branch = branch

    def head(self) -> str | None:
        """main's commit in the clone (read from the ref files), None before the first fetch."""
        if not (self.path / ".git").is_dir():
            return None
        return refs.resolve(self.path, f"refs/heads/{self.branch}")

    def fetch(self) -> str | None:
        """Fetch main into refs/heads/main (forced: main is the forge's); its commit after, None
        when the forge has no main. Raises MemrepoError when the forge cannot be fetched from."""
        ref = f"refs/heads/{self.branch}"
        with folder_lock(self.path):
            try:
                header = self.remote.auth_header()  # an App's installation token: asks the forge
            except Exception as exc:  # the forge client's errors and PyGithub's alike
                raise MemrepoError(PALACE_SERVED_FETCH_FAILED.format(
                    repo=self.repo, problem=redact(str(exc) or type(exc).__name__))) from None
            try:
                if not (self.path / ".git").is_dir():
                    git = pygit2.init_repository(str(self.path), bare=False, initial_head=self.branch)
                    git.config["gc.auto"] = 0  # a page must not wait on a gc
                git = pygit2.Repository(str(self.path))
                before = git.references.get(ref)
                shown = before.target if before is not None else None
                if before is not None:  # libgit2 leaves a ref the forge no longer has: start without it,
                    git.references.create(_SHOWN, shown, force=True)  # its commit still offered as a "have"
                    before.delete()
                try:
                    fetch_from(git, self.remote.url, [f"+{ref}:{ref}"], header)
                except BaseException:
                    if shown is not None and git.references.get(ref) is None:
                        git.references.create(ref, shown)  # a failed fetch keeps what was shown
                    raise
                self._track(git, ref)
            except (pygit2.GitError, ValueError, OSError) as exc:
                raise MemrepoError(PALACE_SERVED_FETCH_FAILED.format(
                    repo=self.repo, problem=redact(str(exc)))) from None
        return self.head()

    def _track(self, git: pygit2.Repository, ref: str) -> None:
        """Record the forge as the clone's `origin` (without credentials) and main as its
        tracking branch, so the pages name the memory's remote, as a user's clone does, and
        say truly that nothing here waits to be pushed (main is the forge's)."""
        url = redact(self.remote.url)
        if _ORIGIN not in git.config or git.config[_ORIGIN] != url:
            git.config[_ORIGIN] = url
        fetched = git.references.get(ref)
        if fetched is not None:
            git.references.create(TRACKING_REF, fetched.target, force=True)
        elif git.references.get(TRACKING_REF) is not None:
            git.references.delete(TRACKING_REF)


@dataclass
class _Memory:
    clone: Clone
    lock: threading.Lock
    palace: Palace | None = None
    fetched_at: float | None = None
    fetched_for: str | None = None
    failed: bool = False


# ------------------------------------------------------------------------------ every memory
class ServedPalaces:
    """The palace pages of every served memory as one WSGI application (`app`), which the
    receiver mounts at /palace/ (webhooks.asgi.Receiver's `palace`). `access` is the event
    stream's check (None: only the operator token is accepted); `remote(repo)` says where a
    memory's git is and the integrator's token for it; `forge(repo)` (optional) a forge client
    for the pending pull requests and the reviews `why` shows. Head events are read from
    settings.redis_url."""

    def __init__(self, settings: Settings, access: AccessCheck | None, *, work_dir: Path,
                 remote: Callable[[str], Remote], forge: Callable[[str], Any] | None = None,
                 poll_ms: int = web.POLL_MS) -> None:
        self.settings = settings
        self.access = access
        self.root = Path(work_dir) / FOLDER
        self.remote = remote
        self.forge = forge
        self._redis: Redis | None = None  # connected on the first read of a head event
        self.poll_ms = poll_ms
        self.key = gate.sealing_key(settings.webhook_secret)
        self._memories: dict[str, _Memory] = {}
        self._forges: list[Any] = []
        self._lock = threading.Lock()
        self.fetches = 0  # fetches made (for tests and benchmarks)

    # ------------------------------------------------------------------ the application
    def app(self) -> Flask:
        made = web.host_app()
        made.register_blueprint(web.blueprint(
            self._resolve, authorize=self._authorize, name="palace", url_prefix=PALACE_PATH + "<owner>/<repo>",
            key_args=("owner", "repo"), poll_ms=self.poll_ms, title=lambda key: f"{key['owner']}/{key['repo']}",
            events=True))
        return made

    def stream_token(self, scope: dict[str, Any]) -> str | None:
        """The token in the sealed cookie of a page's request for its event stream (an ASGI
        scope: the receiver answers the stream itself), None without a valid one."""
        for name, value in scope.get("headers", ()):
            if name == b"cookie":
                jar = http.cookies.SimpleCookie()
                with contextlib.suppress(http.cookies.CookieError):
                    jar.load(value.decode("latin-1"))
                morsel = jar.get(gate.SEALED_COOKIE)
                if morsel is not None:
                    return gate.unseal(self.key, morsel.value)
        return None

    def close(self) -> None:
        with self._lock:
            memories = list(self._memories.values())
            forges, self._forges = self._forges, []
        for memory in memories:
            if memory.palace is not None:
                memory.palace.close()
        for client in forges:
            with contextlib.suppress(Exception):
                client.close()

    # ------------------------------------------------------------------ who may look
    def _authorize(self, req: Any) -> Response | None:
        key = g.get("palace_key", {})
        repo = f"{key.get('owner')}/{key.get('repo')}"
        cookie = gate.unseal(self.key, req.cookies.get(gate.SEALED_COOKIE))
        token, source = gate.viewer_token(req.headers.get("Authorization"), req.args.get("token"), cookie)
        verdict = self.verdict(token, repo) if token is not None else None
        status = gate.served_status(verdict)
        if status != 200:
            text = {401: PALACE_SERVED_NO_TOKEN if verdict is None else PALACE_SERVED_BAD_TOKEN,
                    404: PALACE_SERVED_NO_ACCESS}.get(status, PALACE_SERVED_UNAVAILABLE)
            response = _plain(text.format(repo=repo), status)
            if status == 401:
                response.headers["WWW-Authenticate"] = 'Bearer realm="memrepo palace"'
            if status == 503:
                response.headers["Retry-After"] = "5"
            if source == gate.FROM_COOKIE and verdict == BAD_TOKEN:  # a 404 is one memory's; this is every one's
                response.delete_cookie(gate.SEALED_COOKIE, path=PALACE_PATH)
            return response
        if (req.endpoint or "").endswith(".asset") and self._resolve(key) is not None:
            return None  # the page's stylesheet or script: the page itself just freshened main
        refused = self._freshen(repo)
        if refused is not None:
            return refused
        if source == gate.FROM_QUERY:  # a browser's first visit: the token goes into the sealed cookie
            query = urllib.parse.urlencode([(k, v) for k, v in req.args.items(multi=True) if k != "token"])
            response = redirect(req.script_root + req.path + (f"?{query}" if query else ""), code=303)
            response.set_cookie(gate.SEALED_COOKIE, gate.seal(self.key, token or ""), httponly=True,
                                samesite="Strict", secure=_secure(req), path=PALACE_PATH,
                                max_age=gate.SEALED_HOURS * 3600)
            return response
        return None

    def verdict(self, token: str, repo: str) -> str:
        """The access check's verdict for `token` on `repo` (the operator token: whether it is served)."""
        if not is_repo_name(repo) or not self.settings.accepts(repo):
            return REFUSED
        operator = self.settings.is_operator(token)
        if self.access is None:
            return ALLOWED if operator else BAD_TOKEN
        return self.access.check(None if operator else token, repo)

    # ------------------------------------------------------------------ what is shown
    def _memory(self, repo: str) -> _Memory:
        name = repo.lower()
        with self._lock:
            memory = self._memories.get(name)
            if memory is None:
                owner, _, short = name.partition("/")
                memory = _Memory(Clone(self.root / owner / short, repo, self.remote(repo)), threading.Lock())
                self._memories[name] = memory
            return memory

    def _newest(self, repo: str) -> tuple[bool, str | None]:
        """(whether Redis answered, the newest head event's commit or None)."""
        try:
            if self._redis is None:
                self._redis = Redis.from_url(self.settings.redis_url, socket_timeout=2, socket_connect_timeout=2)
            event = last_head(self._redis, repo)
        except RedisError as exc:
            log.warning("cannot read the newest head of %s: %s", repo, type(exc).__name__)
            return False, None
        return True, event.sha if event is not None else None

    def _freshen(self, repo: str) -> Response | None:
        """Fetch the memory's main when it moved (see should_fetch); a refusal when there is
        nothing to show (a repository this integrator has no head event of and was not named
        in MEMREPO_REPOS, no main on the forge, or no clone and the forge cannot be fetched
        from). The head event is what keeps a viewer from making the receiver clone any
        repository their token can read: only memories the integrator has seen pushed to."""
        answered, newest = self._newest(repo)
        named = self.settings.repos is not None and repo.lower() in self.settings.repos
        if newest is None and not named and repo.lower() not in self._memories:
            if not answered:
                return _plain(PALACE_SERVED_NO_REDIS.format(repo=repo), 503,
                              {"Retry-After": str(int(RETRY_SECONDS))})
            return _plain(PALACE_SERVED_NOT_INTEGRATED.format(repo=repo), 404)
        memory = self._memory(repo)
        with memory.lock:
            head = memory.clone.head()
            now = time.monotonic()
            since = None if memory.fetched_at is None else now - memory.fetched_at
            if should_fetch(head, newest, memory.fetched_for, since, memory.failed, every=FETCH_SECONDS):
                memory.fetched_at = now
                try:
                    self.fetches += 1
                    head = memory.clone.fetch()
                    memory.failed = False
                    memory.fetched_for = newest
                except MemrepoError as exc:
                    memory.failed = True
                    log.warning("%s", exc)
                    if head is None:
                        return _plain(str(exc), 503, {"Retry-After": str(int(RETRY_SECONDS))})
            if head is None and memory.failed:
                return _plain(PALACE_SERVED_NOT_FETCHED.format(repo=repo), 503,
                              {"Retry-After": str(int(RETRY_SECONDS))})
            if head is None:
                return _plain(f"{repo} has no main branch yet: there is no memory to show", 404)
            if memory.palace is None:
                client = self.forge(repo) if self.forge is not None else None
                if client is not None:
                    with self._lock:
                        self._forges.append(client)
                memory.palace = Palace(memory.clone.path, forge=client if client is not None else False,
                                       transcripts=False)
        return None

    def _resolve(self, key: dict[str, Any]) -> Palace | None:
        memory = self._memories.get(f"{key.get('owner')}/{key.get('repo')}".lower())
        return memory.palace if memory is not None else None


def with_credentials(settings: Settings, access: AccessCheck | None, credentials: Any, *, api_url: str,
                     git_url: str, work_dir: Path, **options: Any) -> ServedPalaces:
    """The served palaces reading each memory with the integrator's credentials (a token or a
    GitHub App's), from the forge at `api_url` and its git at `git_url`."""
    from bot.forge.client import ForgeClient
    from bot.forge.retry import RetryPolicy
    from bot.integrator.context import remotes
    from bot.palace.source import FORGE_RETRY

    def forge(repo: str) -> Any:
        return ForgeClient(repo, credentials, base_url=api_url, policy=RetryPolicy(**FORGE_RETRY), timeout=10,
                           min_write_interval=0.0)

    return ServedPalaces(settings, access, work_dir=work_dir, remote=remotes(credentials, api_url, git_url),
                         forge=forge, **options)


def from_env(settings: Settings, access: AccessCheck | None, environ: Any) -> ServedPalaces | None:
    """`memrepo serve`'s palaces: the integrator's credentials, forge and work folder as the
    workers read them (MEMREPO_GITHUB_TOKEN or the GitHub App's, MEMREPO_GITHUB_URL,
    MEMREPO_GIT_URL, MEMREPO_WORK_DIR); None when there are no credentials to fetch memory with
    (the caller says so). A key that is given and cannot be used raises MemrepoError."""
    from bot import settings as service_settings
    from bot.integrator.context import credentials_from_env, git_url_from_env

    try:
        credentials = credentials_from_env(environ)
    except MemrepoError:
        if service_settings.app_key_given(environ):
            raise  # a key was given and cannot be used (an unreadable file, say): say so at start
        return None
    api_url = service_settings.forge_url(environ)
    return with_credentials(settings, access, credentials, api_url=api_url, git_url=git_url_from_env(environ, api_url),
                            work_dir=service_settings.work_dir(environ))


def _plain(text: str, status: int, headers: dict[str, str] | None = None) -> Response:
    response = Response(text + "\n", status=status, mimetype="text/plain")
    for name, value in {**web.SECURITY_HEADERS, "Cache-Control": "no-store", **(headers or {})}.items():
        response.headers[name] = value
    return response


def _secure(req: Any) -> bool:
    """Whether the viewer reached us over HTTPS (directly, or through a proxy that says so)."""
    return bool(req.is_secure or req.headers.get("X-Forwarded-Proto", "").lower() == "https")


__all__ = ["FETCH_SECONDS", "Clone", "ServedPalaces", "from_env", "should_fetch", "with_credentials"]
