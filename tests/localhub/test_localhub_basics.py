"""localhub's foundation: accounts, tokens, repositories, git over HTTP, App auth, headers."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import github
import jwt
import pytest
import requests

from localhub.server import LocalhubServer
from tests.conftest import localhub_app, localhub_token


def client(server: LocalhubServer, token: str) -> github.Github:
    return github.Github(auth=github.Auth.Token(token), base_url=server.api_url, retry=None,
                         seconds_between_requests=0, seconds_between_writes=0)


def git_url(server: LocalhubServer, token: str, full_name: str) -> str:
    return server.url.replace("http://", f"http://x-access-token:{token}@") + f"/{full_name}.git"


def test_pygithub_creates_and_reads_a_repository(localhub: LocalhubServer) -> None:
    gh = client(localhub, localhub_token(localhub, "alice"))
    assert gh.get_user().login == "alice"
    assert gh.get_user("alice").id == gh.get_user().id
    repo = gh.get_user().create_repo("memory", description="Ada's memory", auto_init=True)
    assert repo.full_name == "alice/memory"
    assert repo.default_branch == "main"
    again = gh.get_repo("alice/memory")
    expected = (repo.id, "Ada's memory", f"{localhub.url}/alice/memory.git")
    assert (again.id, again.description, again.clone_url) == expected


def test_duplicate_repository_is_github_422(localhub: LocalhubServer) -> None:
    gh = client(localhub, localhub_token(localhub, "alice"))
    gh.get_user().create_repo("memory")
    with pytest.raises(github.GithubException) as info:
        gh.get_user().create_repo("memory")
    assert info.value.status == 422
    assert info.value.data["errors"][0]["message"] == "name already exists on this account"


def test_git_clone_and_push_over_http_with_a_token(localhub: LocalhubServer, tmp_path: Path) -> None:
    token = localhub_token(localhub, "alice")
    client(localhub, token).get_user().create_repo("memory", auto_init=True)
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", git_url(localhub, token, "alice/memory"), str(clone)], check=True)
    (clone / "note.md").write_text("hello\n")
    subprocess.run(["git", "add", "-A"], cwd=clone, check=True)
    subprocess.run(["git", "commit", "-qm", "note"], cwd=clone, check=True)
    subprocess.run(["git", "push", "-q", "origin", "main"], cwd=clone, check=True)
    local = subprocess.run(["git", "rev-parse", "HEAD"], cwd=clone, capture_output=True, text=True).stdout.strip()
    remote = subprocess.run(["git", "ls-remote", git_url(localhub, token, "alice/memory"), "refs/heads/main"],
                            capture_output=True, text=True, check=True).stdout.split()[0]
    assert remote == local


def test_git_without_or_with_a_wrong_token_is_refused(localhub: LocalhubServer, tmp_path: Path) -> None:
    token = localhub_token(localhub, "alice")
    client(localhub, token).get_user().create_repo("memory", auto_init=True)
    env = {"GIT_TERMINAL_PROMPT": "0", "PATH": "/usr/bin:/bin"}
    for url in (f"{localhub.url}/alice/memory.git", git_url(localhub, "ghp_wrong", "alice/memory")):
        done = subprocess.run(["git", "ls-remote", url], capture_output=True, text=True, env=env)
        assert done.returncode != 0


@pytest.mark.parametrize("header", [None, "token ghp_nope", "Bearer ghp_nope"])
def test_rest_without_valid_credentials_is_401_with_githubs_body(localhub: LocalhubServer, header: str | None) -> None:
    headers = {"Authorization": header} if header else {}
    resp = requests.get(f"{localhub.api_url}/user", headers=headers, timeout=10)
    assert resp.status_code == 401
    body = resp.json()
    assert body["message"] in ("Requires authentication", "Bad credentials")
    assert body["documentation_url"].startswith("https://docs.github.com/")


def test_rest_responses_carry_githubs_headers(localhub: LocalhubServer) -> None:
    token = localhub_token(localhub, "alice")
    first = requests.get(f"{localhub.api_url}/user", headers={"Authorization": f"token {token}"}, timeout=10)
    second = requests.get(f"{localhub.api_url}/user", headers={"Authorization": f"Bearer {token}"}, timeout=10)
    assert first.headers["X-RateLimit-Limit"] == "5000"
    assert int(first.headers["X-RateLimit-Remaining"]) == int(second.headers["X-RateLimit-Remaining"]) + 1
    assert int(first.headers["X-RateLimit-Reset"]) > time.time()
    assert first.headers["X-GitHub-Request-Id"] != second.headers["X-GitHub-Request-Id"]


def test_github_app_flow_gives_an_installation_token(localhub: LocalhubServer) -> None:
    owner_token = localhub_token(localhub, "acme")
    client(localhub, owner_token).get_user().create_repo("memory", auto_init=True)
    app = localhub_app(localhub, "acme")
    auth = github.Auth.AppAuth(app["id"], app["private_key"])
    integration = github.GithubIntegration(auth=auth, base_url=localhub.api_url)
    installation = integration.get_repo_installation("acme", "memory")
    token = integration.get_access_token(installation.id)
    assert token.token.startswith("ghs_")
    bot = client(localhub, token.token)
    assert bot.get_repo("acme/memory").full_name == "acme/memory"
    # A JWT signed with another key is refused.
    forged = jwt.encode({"iss": str(app["id"]), "iat": int(time.time()) - 30, "exp": int(time.time()) + 300},
                        _other_key(), algorithm="RS256")
    resp = requests.get(f"{localhub.api_url}/app", headers={"Authorization": f"Bearer {forged}"}, timeout=10)
    assert resp.status_code == 401


def _other_key() -> str:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption()).decode()


def test_state_survives_a_restart(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with LocalhubServer(data) as first:
        token = localhub_token(first, "alice")
        client(first, token).get_user().create_repo("memory", auto_init=True)
    with LocalhubServer(data) as second:
        assert client(second, token).get_repo("alice/memory").default_branch == "main"
