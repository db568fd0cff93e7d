"""`memrepo localhub serve`: GitHub's REST API and git transport on this machine;
`memrepo localhub create-repo OWNER/NAME`: a repository on a running localhub, as a person
would create one on GitHub (the owner's account and token are made when missing), answered with
the URL `memrepo repository set` takes.

Every call to localhub's own endpoints (`/_localhub/`) carries its operator credential, read
from its data folder (localhub.access says why): a newcomer's first token is made with it. An
owner who has an account keeps the tokens they have: localhub stores only tokens' hashes, so
none can be shown again, and minting one per call would leave a trail of live tokens nobody
holds. create-repo then has the repository made with the operator credential and mints a new
token only when asked (`--new-token`)."""

from __future__ import annotations

import argparse
import contextlib
import io
import logging
from pathlib import Path
from typing import Any

from bot.commands import texts
from bot.errors import MemrepoError
from bot.settings import REPO_NAME, data_dir

LOCALHUB_SERVING = (
    "localhub serving {url} (REST: {api}, git: {url}/<owner>/<repo>.git), data in {data}. "
    "Create a repository: memrepo localhub create-repo OWNER/NAME --url {url}\n"
    "localhub: accounts and tokens are those kept in {data}; a token made by a localhub on another data folder "
    "(`memrepo serve --local` keeps its own in {other}) is refused here, even on the same port"
)
LOCALHUB_BAD_REPOSITORY = (
    "{value!a} is not OWNER/NAME: the owner is 1-39 ASCII letters, digits or hyphens (not last), the name ASCII "
    "letters, digits, '.', '_' or '-' (not ending in .git)"
)
LOCALHUB_UNREACHABLE = (
    "cannot reach localhub at {url} ({problem}); start it first (`memrepo localhub serve`, or "
    "`memrepo serve --local`), or give its address with --url"
)
LOCALHUB_CREATE_FAILED = "localhub at {url} did not create {repo}: {problem}"
LOCALHUB_REPO_CONNECT = (
    "clone URL (with {owner}'s token): {git_url}\n"
    "connect a memory to it: memrepo repository set {git_url} --repo DIR"
)
LOCALHUB_REPO_CONNECT_KNOWN_OWNER = (
    "clone URL (put one of {owner}'s tokens for TOKEN): {git_url}\n"
    "{owner} has an account already, so no token was made: the tokens {owner} has stay valid (localhub "
    "keeps only their hashes and cannot show one again); a new one: the same command with --new-token\n"
    "connect a memory to it: memrepo repository set {git_url} --repo DIR"
)
LOCALHUB_CANNOT_START = "localhub cannot start on {host}:{port} with data in {data}: {error}"
LOCALHUB_NO_OPERATOR_TOKEN = (
    "localhub at {url} did not make {repo}: {problem}. No operator token it takes was found "
    "in {looked}; give its data folder with --data"
)

DEFAULT_URL = "http://127.0.0.1:8765"  # where `localhub serve` and `serve --local` listen by default


def default_data_dir() -> Path:
    return data_dir("localhub")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("localhub", help=texts.LOCALHUB_HELP,
                       description=texts.LOCALHUB_DESCRIPTION)
    actions = p.add_subparsers(title="actions", metavar="ACTION", required=True)
    serve = actions.add_parser("serve", help=texts.LOCALHUB_SERVE_HELP)
    serve.add_argument("--host", default="127.0.0.1", help=texts.BIND_HOST_HELP)
    serve.add_argument("--port", type=int, default=8765, help=texts.LOCALHUB_PORT_HELP)
    serve.add_argument("--data", type=Path, default=None, metavar="DIR",
                       help=texts.LOCALHUB_DATA_HELP.format(path=default_data_dir()))
    serve.add_argument("--access-log", action="store_true", help=texts.LOCALHUB_ACCESS_LOG_HELP)
    serve.set_defaults(func=run_serve)

    create = actions.add_parser("create-repo", help=texts.LOCALHUB_CREATE_HELP,
                                description=texts.LOCALHUB_CREATE_DESCRIPTION)
    create.add_argument("repository", metavar="OWNER/NAME")
    create.add_argument("--url", default=DEFAULT_URL, help=texts.LOCALHUB_URL_HELP.format(url=DEFAULT_URL))
    create.add_argument("--private", action="store_true", help=texts.LOCALHUB_PRIVATE_HELP)
    create.add_argument("--description", metavar="TEXT", default=None)
    create.add_argument("--data", type=Path, default=None, metavar="DIR", help=texts.LOCALHUB_CREATE_DATA_HELP)
    create.add_argument("--new-token", action="store_true", help=texts.LOCALHUB_NEW_TOKEN_HELP)
    create.set_defaults(func=run_create_repo)


def run_serve(args: argparse.Namespace) -> int:
    from localhub.server import LocalhubServer

    data = (args.data or default_data_dir()).expanduser()
    if not 0 <= args.port <= 65535:
        raise MemrepoError(f"port {args.port} is not a TCP port (0-65535)")
    try:
        data.mkdir(parents=True, exist_ok=True)
        with contextlib.redirect_stderr(io.StringIO()):  # werkzeug prints its own advice, then exits
            server = LocalhubServer(data, args.host, args.port)
    except OSError as exc:
        raise MemrepoError(LOCALHUB_CANNOT_START.format(
            host=args.host, port=args.port, data=data, error=exc.strerror or exc)) from None
    except SystemExit:
        raise MemrepoError(LOCALHUB_CANNOT_START.format(
            host=args.host, port=args.port, data=data, error="the address is in use")) from None
    if args.access_log:
        logging.basicConfig(level=logging.INFO, format="%(message)s")
        logging.getLogger("localhub.access").setLevel(logging.INFO)
    other = data_dir("serve") / "localhub"  # where `serve --local` keeps its localhub
    print(LOCALHUB_SERVING.format(url=server.url, api=server.api_url, data=data, other=other), flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


def _post(url: str, payload: dict[str, Any], token: str | None = None) -> Any:
    """POST to the running localhub; MemrepoError (one line) when it cannot be reached."""
    import requests

    headers = {"Authorization": f"token {token}"} if token else {}
    try:
        return requests.post(url, json=payload, headers=headers, timeout=10)
    except requests.RequestException as exc:
        base = url.split("/_localhub/")[0].split("/api/v3/")[0]
        raise MemrepoError(LOCALHUB_UNREACHABLE.format(url=base, problem=type(exc).__name__)) from None


def _said(resp: Any) -> str:
    """What localhub (as GitHub) says went wrong, in one line."""
    try:
        data = resp.json()
    except ValueError:
        return f"HTTP {resp.status_code}"
    details = "; ".join(str(e.get("message")) for e in data.get("errors") or () if isinstance(e, dict))
    said = str(data.get("message") or f"HTTP {resp.status_code}")
    return " ".join(f"{said.rstrip('.')}: {details}".split()) if details else said


def _operator_folders(given: Path | None) -> list[Path]:
    """Where the operator token of the localhub create-repo talks to may be: the folder given,
    else the default data folders of `localhub serve` and `serve --local`."""
    return [given.expanduser()] if given else [default_data_dir(), data_dir("serve") / "localhub"]


def _as_operator(url: str, payload: dict[str, Any], args: argparse.Namespace) -> Any:
    """POST with each operator token found until localhub accepts one (another localhub's is
    refused with 401); without any, unauthenticated, so localhub says what is missing, and
    then a one-line MemrepoError naming the folders looked in."""
    from localhub.operator import read_operator_token

    folders = _operator_folders(args.data)
    resp = None
    for secret in (s for s in (read_operator_token(folder) for folder in folders) if s):
        resp = _post(url, payload, secret)
        if resp.status_code != 401:
            return resp
    if resp is None:
        resp = _post(url, payload)
    base = url.split("/_localhub/")[0]
    raise MemrepoError(LOCALHUB_NO_OPERATOR_TOKEN.format(
        repo=args.repository, url=base, problem=_said(resp).rstrip("."),
        looked=", ".join(str(folder) for folder in folders)))


def _new_token(url: str, owner: str, args: argparse.Namespace) -> str:
    """A new token for `owner` (its account made when missing), asked for as the operator."""
    resp = _as_operator(f"{url}/_localhub/tokens", {"login": owner}, args)
    if resp.status_code != 201:
        raise MemrepoError(LOCALHUB_CREATE_FAILED.format(repo=args.repository, url=url, problem=_said(resp)))
    return str(resp.json()["token"])


def run_create_repo(args: argparse.Namespace) -> int:
    match = REPO_NAME.fullmatch(args.repository)
    name = match.group("name") if match else ""
    if match is None or name in (".", "..") or name.endswith(".git"):
        raise MemrepoError(LOCALHUB_BAD_REPOSITORY.format(value=args.repository))
    owner = match.group("owner")
    url = args.url.rstrip("/")
    if not url.startswith(("http://", "https://")):
        raise MemrepoError(f"--url {args.url!r} is not an http:// or https:// address of localhub")
    spec = {"name": name, "private": args.private, "description": args.description}
    token = _new_token(url, owner, args) if args.new_token else None
    if token is None:
        resp = _as_operator(f"{url}/_localhub/users/{owner}/repos", spec, args)
        if resp.status_code == 404:  # no such account: a newcomer's, made with its first token
            token = _new_token(url, owner, args)
    if token is not None:
        resp = _post(f"{url}/api/v3/user/repos", spec, token)
    existed = resp.status_code == 422 and "already exists" in _said(resp)
    if resp.status_code != 201 and not existed:
        raise MemrepoError(LOCALHUB_CREATE_FAILED.format(repo=args.repository, url=url, problem=_said(resp)))
    done = "{repo} already exists on {url}; nothing was changed" if existed else "created {repo} on {url}"
    print(done.format(repo=f"{owner}/{name}", url=url))
    if token is None:
        git_url = url.replace("://", "://x-access-token:TOKEN@", 1) + f"/{owner}/{name}.git"
        print(LOCALHUB_REPO_CONNECT_KNOWN_OWNER.format(owner=owner, git_url=git_url))
    else:
        git_url = url.replace("://", f"://x-access-token:{token}@", 1) + f"/{owner}/{name}.git"
        print(LOCALHUB_REPO_CONNECT.format(owner=owner, git_url=git_url))
    return 0
