"""git smart HTTP at `/<owner>/<repo>.git/...`, so clones and pushes speak real git. Token
auth as GitHub takes it: HTTP Basic with the token as the password
(`https://x-access-token:<token>@host/owner/repo.git`).

The smart protocol's two requests per service (`GET info/refs?service=git-X`, `POST git-X`)
run `git upload-pack` or `git receive-pack --stateless-rpc` directly, as `git http-backend`
would, minus the CGI process in between: every fetch of every agent passes through here, and
the extra process per request was most of localhub's cost under load. Dumb-protocol paths,
which git only falls back to when smart HTTP is missing, still go to `git http-backend`.

A push is compared ref by ref before and after, and each moved ref becomes a `push` event
(and, through the pull request module, `synchronize` for pull requests it heads)."""

from __future__ import annotations

import gzip
import os
import subprocess
import zlib

from flask import Flask, Response, g, request

from bot.forge.localhub.errors import ApiError
from bot.forge.localhub.hub import Hub

SMART = ("git-upload-pack", "git-receive-pack")
DUMB = ("HEAD", "objects/")
CGI_TIMEOUT = 300
MAX_REQUEST = 100 * 1024 * 1024
NO_CACHE = {"Expires": "Fri, 01 Jan 1980 00:00:00 GMT", "Pragma": "no-cache",
            "Cache-Control": "no-cache, max-age=0, must-revalidate"}


def _challenge() -> Response:
    resp = Response("Authentication required\n", status=401, mimetype="text/plain")
    resp.headers["WWW-Authenticate"] = 'Basic realm="GitHub"'
    return resp


def _pkt_line(text: str) -> bytes:
    data = text.encode()
    return f"{len(data) + 4:04x}".encode() + data


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
            raise ApiError(415, f"Unsupported Content-Encoding: {encoding}")
    except (OSError, EOFError, zlib.error) as exc:
        raise ApiError(400, "The request body could not be decompressed") from exc
    if len(body) > MAX_REQUEST:
        raise ApiError(413, "Request body too large")
    return body


def _env() -> dict[str, str]:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "REMOTE_USER": g.user["login"],
           "REMOTE_ADDR": request.remote_addr or "127.0.0.1"}
    if request.headers.get("Git-Protocol"):
        env["GIT_PROTOCOL"] = request.headers["Git-Protocol"]
    return env


def _smart(path: str, service: str, advertise: bool, env: dict[str, str]) -> Response:
    """One smart-protocol request, answered by the service itself in stateless-RPC mode."""
    args = ["git", service.removeprefix("git-"), "--stateless-rpc"]
    body = b""
    if advertise:
        args.append("--advertise-refs")
    else:
        body = _request_body()
    done = subprocess.run([*args, path], input=body, env=env, capture_output=True, timeout=CGI_TIMEOUT)
    if done.returncode != 0 and not done.stdout:
        raise ApiError(500, f"{service} failed")
    if not advertise:
        return Response(done.stdout, headers={"Content-Type": f"application/x-{service}-result", **NO_CACHE})
    prefix = b""
    if "version=2" not in env.get("GIT_PROTOCOL", ""):  # protocol v0/v1 names the service first
        prefix = _pkt_line(f"# service={service}\n") + b"0000"
    return Response(prefix + done.stdout,
                    headers={"Content-Type": f"application/x-{service}-advertisement", **NO_CACHE})


def _dumb(hub: Hub, path: str, service: str, env: dict[str, str]) -> Response:
    body = request.get_data()
    env = {**env, "GIT_PROJECT_ROOT": str(hub.repos_dir), "GIT_HTTP_EXPORT_ALL": "1",
           "PATH_INFO": f"/{os.path.relpath(path, hub.repos_dir)}/{service}",
           "REQUEST_METHOD": request.method, "QUERY_STRING": request.query_string.decode("latin-1"),
           "CONTENT_TYPE": request.headers.get("Content-Type", ""), "CONTENT_LENGTH": str(len(body))}
    done = subprocess.run(["git", "http-backend"], input=body, env=env, capture_output=True, timeout=CGI_TIMEOUT)
    return _parse_cgi(done.stdout)


def register(app: Flask, hub: Hub) -> None:
    @app.route("/<owner>/<repo>.git/<path:service>", methods=["GET", "POST"])
    def git_http(owner: str, repo: str, service: str) -> Response:
        if getattr(g, "user", None) is None:
            return _challenge()
        asked = request.args.get("service", "")
        if service == "info/refs" and asked in SMART and request.method == "GET":
            smart, advertise = asked, True
        elif service in SMART and request.method == "POST":
            smart, advertise = service, False
        elif service == "info/refs" or service.startswith(DUMB):
            smart, advertise = None, False
        else:
            raise ApiError(404, "Not Found")
        row = hub.repo(owner, repo)
        path = str(hub.repo_path(row))
        env = _env()
        if smart is None:
            return _dumb(hub, path, service, env)
        before = hub.refs(row) if smart == "git-receive-pack" and not advertise else None
        resp = _smart(path, smart, advertise, env)
        if before is not None:
            after = hub.refs(row)
            for ref in sorted(set(before) | set(after)):
                if before.get(ref) != after.get(ref):
                    hub.ref_moved(row, ref, before.get(ref), after.get(ref), g.user["id"])
        return resp
