"""git smart HTTP at `/<owner>/<repo>.git/...`, served by `git http-backend` (CGI), so
clones and pushes speak real git. Token auth as GitHub takes it: HTTP Basic with the token
as the password (`https://x-access-token:<token>@host/owner/repo.git`).

A push is compared ref by ref before and after, and each moved ref becomes a `push` event
(and, through the pull request module, `synchronize` for pull requests it heads)."""

from __future__ import annotations

import os
import subprocess

from flask import Flask, Response, g, request

from bot.forge.localhub.errors import ApiError
from bot.forge.localhub.hub import Hub

SERVICES = ("info/refs", "git-upload-pack", "git-receive-pack", "HEAD")
CGI_TIMEOUT = 300


def _challenge() -> Response:
    resp = Response("Authentication required\n", status=401, mimetype="text/plain")
    resp.headers["WWW-Authenticate"] = 'Basic realm="GitHub"'
    return resp


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


def register(app: Flask, hub: Hub) -> None:
    @app.route("/<owner>/<repo>.git/<path:service>", methods=["GET", "POST"])
    def git_http(owner: str, repo: str, service: str) -> Response:
        if getattr(g, "user", None) is None:
            return _challenge()
        if not any(service == s or service.startswith(s + "/") for s in SERVICES) and \
                not service.startswith("objects/"):
            raise ApiError(404, "Not Found")
        row = hub.repo(owner, repo)
        path = hub.repo_path(row)
        pushing = service == "git-receive-pack" or request.args.get("service") == "git-receive-pack"
        body = request.get_data()
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "GIT_PROJECT_ROOT": str(hub.repos_dir),
            "GIT_HTTP_EXPORT_ALL": "1",
            "PATH_INFO": f"/{path.relative_to(hub.repos_dir).as_posix()}/{service}",
            "REQUEST_METHOD": request.method,
            "QUERY_STRING": request.query_string.decode("latin-1"),
            "CONTENT_TYPE": request.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "REMOTE_USER": g.user["login"],
            "REMOTE_ADDR": request.remote_addr or "127.0.0.1",
            "GIT_HTTP_MAX_REQUEST_BUFFER": str(100 * 1024 * 1024),
        }
        if request.headers.get("Content-Encoding"):
            env["HTTP_CONTENT_ENCODING"] = request.headers["Content-Encoding"]
        if request.headers.get("Git-Protocol"):
            env["GIT_PROTOCOL"] = request.headers["Git-Protocol"]
        before = hub.refs(row) if pushing and request.method == "POST" else None
        done = subprocess.run(["git", "http-backend"], input=body, env=env, capture_output=True,
                              timeout=CGI_TIMEOUT)
        resp = _parse_cgi(done.stdout)
        if before is not None:
            after = hub.refs(row)
            for ref in sorted(set(before) | set(after)):
                if before.get(ref) != after.get(ref):
                    hub.ref_moved(row, ref, before.get(ref), after.get(ref), g.user["id"])
        return resp
