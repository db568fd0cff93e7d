"""git smart HTTP at `/<owner>/<repo>.git/...`, so clones and pushes speak real git. Token
auth as GitHub takes it: HTTP Basic with the token as the password
(`https://x-access-token:<token>@host/owner/repo.git`).

The smart protocol's two requests per service (`GET info/refs?service=git-X`, `POST git-X`)
run `git upload-pack` or `git receive-pack --stateless-rpc` directly, as `git http-backend`
would, minus the CGI process in between: every fetch of every agent passes through here, and
the extra process per request was most of localhub's cost under load. For the same reason
protocol v2's capabilities and `ls-refs` are answered here (`git_protocol`), and identical
pack requests share one answer (`PackCache`). Dumb-protocol paths, which git only falls back
to when smart HTTP is missing, still go to `git http-backend`.

A push is compared ref by ref before and after, and each moved ref becomes a `push` event
(and, through the pull request module, `synchronize` for pull requests it heads).

Access is GitHub's: no or a wrong token is asked for credentials (401 with a challenge); a
fetch needs read access, a push write access, checked on both requests of each (the second
can be sent without the first). A repository the caller cannot read is "Repository not found"
(404), a push without write access "Permission ... denied" (403), in plain text, which git
prints after `remote:`."""

from __future__ import annotations

import gzip
import hashlib
import os
import re
import subprocess
import threading
import time
import zlib
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from flask import Blueprint, Response, g, request

from localhub import git_protocol, messages
from localhub.access import loopback_host
from localhub.errors import ApiError, not_found
from localhub.hub import Hub, current_hub
from localhub.mergeability import protection

SMART = ("git-upload-pack", "git-receive-pack")
NAME = re.compile(r"(?!\.\.?$)[A-Za-z0-9._-]{1,100}")  # an account's or a repository's name, never . or ..
# The dumb protocol's files, as `git http-backend` serves them (its table of services in git's
# http-backend.c), matched whole: any other path, one that climbs out with `..` or names an
# absolute path included, is no file of the repository's and answered 404, as on GitHub.
DUMB = re.compile(r"HEAD|info/refs|objects/info/(?:alternates|http-alternates|packs)"
                  r"|objects/[0-9a-f]{2}/(?:[0-9a-f]{38}|[0-9a-f]{62})"
                  r"|objects/pack/pack-(?:[0-9a-f]{40}|[0-9a-f]{64})\.(?:pack|idx)")
CGI_TIMEOUT = 300
MAX_REQUEST = 100 * 1024 * 1024
_capabilities: dict[tuple[str, str], bytes] = {}  # (repository path, Git-Protocol) -> v2 advertisement
NO_CACHE = {"Expires": "Fri, 01 Jan 1980 00:00:00 GMT", "Pragma": "no-cache",
            "Cache-Control": "no-cache, max-age=0, must-revalidate"}


def _challenge(hub: Hub) -> Response:
    """git's 401: asks for credentials, or, when the token given is unknown here, says so and
    which localhub answered (git shows neither, but curl and a person reading logs do)."""
    text = "Authentication required"
    if getattr(g, "unknown_token", False):
        text = messages.UNKNOWN_TOKEN.format(data=hub.data_dir) if loopback_host(request.host) \
            else messages.UNKNOWN_TOKEN_REMOTE
    resp = Response(text + "\n", status=401, mimetype="text/plain")
    resp.headers["WWW-Authenticate"] = 'Basic realm="GitHub"'
    return resp


def _refusal(status: int, message: str) -> Response:
    return Response(message + "\n", status=status, mimetype="text/plain")


def _refused(hub: Hub, row: Any | None, service: str | None) -> Response | None:
    """GitHub's answer when the caller may not use `service` on `row` (None: no such
    repository), else None. A push needs write access; anything else read access."""
    if row is None or not hub.can_read(g.user, row, g.token):
        return _refusal(404, messages.REPOSITORY_NOT_FOUND)
    if service == "git-receive-pack" and not hub.may("write", g.user, row, g.token):
        return _refusal(403, messages.PUSH_DENIED.format(repo=hub.full_name(row), login=g.user["login"]))
    return None


def _protected(hub: Hub, row: Any) -> Response | None:
    """GitHub's pre-receive refusal when the push updates a branch whose protection requires
    a pull request, unless the pusher is on the rule's bypass list (a ruleset's bypass
    actors); nothing is unpacked or moved. None when the push may go on."""
    try:
        commands, capabilities = git_protocol.receive_commands(_request_body())
    except git_protocol.ProtocolError:
        return None  # git itself answers a malformed request
    login = str(g.user["login"]).lower()
    for _, _, ref in commands:
        rule = protection(row, ref.removeprefix("refs/heads/")) if ref.startswith("refs/heads/") else None
        if rule and rule.get("pull_request") and login not in [str(b).lower() for b in rule.get("bypass") or ()]:
            out = git_protocol.refused_push([r for _, _, r in commands], messages.PROTECTED_BRANCH_DECLINED,
                                            [messages.PROTECTED_BRANCH_FAILED.format(ref=ref),
                                             messages.PROTECTED_BRANCH_NEEDS_PULL], capabilities)
            return Response(out, headers={"Content-Type": "application/x-git-receive-pack-result", **NO_CACHE})
    return None


def _parse_cgi(output: bytes) -> Response:
    head, _, body = output.partition(b"\r\n\r\n")
    if not _ and b"\n\n" in output:
        head, _, body = output.partition(b"\n\n")
    status = 200
    headers: list[tuple[str, str]] = []
    for line in head.decode("latin-1").splitlines():
        key, _, value = line.partition(":")
        if key.lower() == "status":
            status = int(value.strip().split()[0])
        elif key:
            headers.append((key.strip(), value.strip()))
    return Response(body, status=status, headers=headers)


def _request_body() -> bytes:
    """The POST body, inflated when the client compressed it (git gzips large requests)."""
    body = request.get_data()
    encoding = (request.headers.get("Content-Encoding") or "").lower()
    try:
        if encoding in ("gzip", "x-gzip"):
            body = gzip.decompress(body)
        elif encoding == "deflate":
            body = zlib.decompress(body)
        elif encoding:
            raise ApiError(415, messages.UNSUPPORTED_ENCODING.format(encoding=encoding))
    except (OSError, EOFError, zlib.error) as exc:
        raise ApiError(400, messages.NOT_DECOMPRESSED) from exc
    if len(body) > MAX_REQUEST:
        raise ApiError(413, messages.REQUEST_TOO_LARGE)
    return body


def _env() -> dict[str, str]:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "REMOTE_USER": g.user["login"],
           "REMOTE_ADDR": request.remote_addr or "127.0.0.1"}
    if request.headers.get("Git-Protocol"):
        env["GIT_PROTOCOL"] = request.headers["Git-Protocol"]
    return env


def _run(args: list[str], body: bytes, env: dict[str, str], service: str) -> bytes:
    done = subprocess.run(args, input=body, env=env, capture_output=True, timeout=CGI_TIMEOUT)
    if done.returncode != 0 and not done.stdout:
        raise ApiError(500, f"{service} failed")
    return done.stdout


class PackCache:
    """Answers to byte-identical upload-pack requests (protocol v0's POST, v2's `fetch`), kept
    for `ttl` seconds. When `main` moves, every agent following it asks for the same pack at the
    same moment; one `git upload-pack` answers them all (GitHub caches pack-objects output for
    the same reason). Objects are never removed here, so the same request gets an equally
    valid answer; the short life bounds how long a want whose ref has gone is still served.
    Requests that arrive while the first is being answered wait for its answer."""

    def __init__(self, ttl: float = 30.0, max_bytes: int = 64 * 1024 * 1024) -> None:
        self.ttl = ttl
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        self._answers: OrderedDict[tuple[str, bytes], tuple[float, bytes]] = OrderedDict()
        self._size = 0
        self._pending: dict[tuple[str, bytes], Future[bytes]] = {}

    def answer(self, scope: str, body: bytes, compute: Callable[[], bytes]) -> bytes:
        """The answer to `body` in `scope` (a repository and protocol), computed once."""
        key = (scope, hashlib.sha256(body).digest())
        with self._lock:
            kept = self._answers.get(key)
            if kept is not None and kept[0] > time.monotonic():
                self._answers.move_to_end(key)
                return kept[1]
            pending = self._pending.get(key)
            owner = pending is None
            if pending is None:
                pending = self._pending[key] = Future()
        if not owner:
            return pending.result(timeout=CGI_TIMEOUT)
        try:
            value = compute()
        except BaseException as exc:
            pending.set_exception(exc)
            raise
        finally:
            with self._lock:
                self._pending.pop(key, None)
        pending.set_result(value)
        self._keep(key, value)
        return value

    def _keep(self, key: tuple[str, bytes], value: bytes) -> None:
        if len(value) > self.max_bytes // 4:
            return
        with self._lock:
            old = self._answers.pop(key, None)
            self._size -= len(old[1]) if old else 0
            self._answers[key] = (time.monotonic() + self.ttl, value)
            self._size += len(value)
            now = time.monotonic()
            while self._answers and (self._size > self.max_bytes or next(iter(self._answers.values()))[0] <= now):
                _, (_, dropped) = self._answers.popitem(last=False)
                self._size -= len(dropped)


_packs = PackCache()


def _smart(hub: Hub, row: Any, service: str, advertise: bool, env: dict[str, str]) -> Response:
    """One smart-protocol request, answered by the service itself in stateless-RPC mode; with
    protocol v2, upload-pack's capabilities and its `ls-refs` command are answered here."""
    path = str(hub.repo_path(row))
    args = ["git", service.removeprefix("git-"), "--stateless-rpc"]
    v2 = service == "git-upload-pack" and "version=2" in env.get("GIT_PROTOCOL", "")
    if not advertise:
        body = _request_body()
        command, arguments = git_protocol.parse_command(body) if v2 else (None, [])
        if command == "ls-refs":
            out = git_protocol.ls_refs(hub.git(row), arguments)
        elif service == "git-upload-pack" and (command == "fetch" or not v2):  # a pack
            out = _packs.answer(f"{path}\0{env.get('GIT_PROTOCOL', '')}", body,
                                lambda: _run([*args, path], body, env, service))
        else:
            out = _run([*args, path], body, env, service)
        return Response(out, headers={"Content-Type": f"application/x-{service}-result", **NO_CACHE})
    if v2:  # the same for every request to a repository: its capabilities, no refs
        key = (path, env["GIT_PROTOCOL"])
        out = _capabilities.get(key) or _capabilities.setdefault(key, _run([*args, "--advertise-refs", path], b"",
                                                                             env, service))
        prefix = b""
    else:  # protocol v0/v1 lists the refs, after a line naming the service
        out = _run([*args, "--advertise-refs", path], b"", env, service)
        prefix = git_protocol.pkt_line(f"# service={service}\n") + git_protocol.FLUSH
    return Response(prefix + out, headers={"Content-Type": f"application/x-{service}-advertisement", **NO_CACHE})


def _dumb(hub: Hub, path: str, service: str, env: dict[str, str]) -> Response:
    body = request.get_data()
    env = {**env, "GIT_PROJECT_ROOT": str(hub.repos_dir), "GIT_HTTP_EXPORT_ALL": "1",
           "PATH_INFO": f"/{os.path.relpath(path, hub.repos_dir)}/{service}",
           "REQUEST_METHOD": request.method, "QUERY_STRING": request.query_string.decode("latin-1"),
           "CONTENT_TYPE": request.headers.get("Content-Type", ""), "CONTENT_LENGTH": str(len(body))}
    done = subprocess.run(["git", "http-backend"], input=body, env=env, capture_output=True, timeout=CGI_TIMEOUT)
    return _parse_cgi(done.stdout)


def served(method: str, service: str, asked: str | None) -> tuple[str | None, bool] | None:
    """What a request for `service` (the path after `.git/`) with `?service=asked` is: (the smart
    service, whether it asks for the advertisement), (None, False) for a dumb-protocol file, or
    None for anything git does not ask for, answered 404."""
    if method == "GET" and service == "info/refs" and asked is not None:
        return (asked, True) if asked in SMART else None
    if method == "POST" and service in SMART:
        return service, False
    if method == "GET" and DUMB.fullmatch(service):
        return None, False
    return None


bp = Blueprint("git_http", __name__)


@bp.route("/<owner>/<repo>.git/<path:service>", methods=["GET", "POST"])
def git_http(owner: str, repo: str, service: str) -> Response:
    hub = current_hub()
    found = served(request.method, service, request.args.get("service"))
    if found is None or not (NAME.fullmatch(owner) and NAME.fullmatch(repo)):
        raise not_found()  # before credentials: no token makes such a path one of a repository's
    if getattr(g, "user", None) is None:
        return _challenge(hub)
    smart, advertise = found
    row = hub.find_repo(owner, repo)
    refused = _refused(hub, row, smart)
    if refused is not None:
        return refused
    env = _env()
    if smart is None:
        return _dumb(hub, str(hub.repo_path(row)), service, env)
    if smart == "git-receive-pack" and not advertise:
        declined = _protected(hub, row)
        if declined is not None:
            return declined
    before = hub.refs(row) if smart == "git-receive-pack" and not advertise else None
    resp = _smart(hub, row, smart, advertise, env)
    if before is not None:
        after = hub.refs(row)
        for ref in sorted(set(before) | set(after)):
            if before.get(ref) != after.get(ref):
                hub.ref_moved(row, ref, before.get(ref), after.get(ref), g.user["id"])
    return resp
