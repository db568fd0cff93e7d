"""localhub's own endpoints and files as a security boundary: every endpoint under
`/_localhub/` but the health check needs the operator credential (tokens, repositories, Apps,
protection; tests/abuse/test_abuse_cross_origin.py tries each), they answer only requests addressed
to a loopback host, and the database (where tokens are kept as hashes) is readable by its owner
only."""

from __future__ import annotations

import sqlite3
import stat
from pathlib import Path

import requests

from localhub.operator import OPERATOR_FILE, read_operator_token
from localhub.server import LocalhubServer
from tests.conftest import localhub_token, operator_headers


def mint(server: LocalhubServer, login: str, headers: dict[str, str] | None = None) -> requests.Response:
    return requests.post(f"{server.url}/_localhub/tokens", json={"login": login}, headers=headers or {}, timeout=10)


def whoami(server: LocalhubServer, token: str) -> str:
    resp = requests.get(f"{server.api_url}/user", headers={"Authorization": f"token {token}"}, timeout=10)
    assert resp.status_code == 200, resp.text
    return str(resp.json()["login"])


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


# ---------------------------------------------------------------------------------- tokens
def test_a_token_even_for_a_new_login_needs_the_operator_credential(localhub: LocalhubServer) -> None:
    """A login a memory's configuration names but nobody has signed up yet is no one's to
    take: a page or a local process that could make its first token would be that person."""
    user_token = localhub_token(localhub, "bob")
    for headers in ({}, {"Authorization": f"token {user_token}"}):
        assert mint(localhub, "sam", headers).status_code in (401, 403)
    assert localhub.hub.user_by_login("sam") is None
    resp = mint(localhub, "sam", operator_headers(localhub))
    assert resp.status_code == 201
    assert whoami(localhub, resp.json()["token"]) == "sam"


def test_a_repository_for_an_existing_account_needs_the_operator_credential(localhub: LocalhubServer) -> None:
    """What `create-repo` asks for when the owner has a token already: the repository, and
    no new token."""
    token = localhub_token(localhub, "alice")
    url = f"{localhub.url}/_localhub/users/alice/repos"
    for headers in ({}, {"Authorization": f"token {token}"}):
        refused = requests.post(url, json={"name": "memory"}, headers=headers, timeout=10)
        assert refused.status_code in (401, 403) and "operator credential" in refused.json()["message"]
    made = requests.post(url, json={"name": "memory", "private": True}, headers=operator_headers(localhub), timeout=10)
    assert made.status_code == 201 and made.json()["full_name"] == "alice/memory" and made.json()["private"]
    again = requests.post(url, json={"name": "memory"}, headers=operator_headers(localhub), timeout=10)
    assert again.status_code == 422 and "already exists" in again.json()["errors"][0]["message"]
    nobody = requests.post(f"{localhub.url}/_localhub/users/nobody/repos", json={"name": "memory"},
                           headers=operator_headers(localhub), timeout=10)
    assert nobody.status_code == 404
    tokens = localhub.hub.store.one("SELECT COUNT(*) AS n FROM tokens t JOIN users u ON u.id = t.user_id "
                                    "WHERE u.login = 'alice'")["n"]
    assert tokens == 1
    seen = requests.get(f"{localhub.api_url}/repos/alice/memory", headers={"Authorization": f"token {token}"},
                        timeout=10)
    assert seen.status_code == 200


def test_a_token_for_an_existing_account_needs_the_operator_credential(localhub: LocalhubServer) -> None:
    localhub_token(localhub, "alice")
    assert mint(localhub, "alice").status_code == 401
    assert mint(localhub, "ALICE").status_code == 401  # logins are one account whatever their case
    user_token = localhub_token(localhub, "bob")
    assert mint(localhub, "alice", {"Authorization": f"token {user_token}"}).status_code == 403
    secret = read_operator_token(localhub.hub.data_dir)
    for scheme in ("Bearer", "token"):
        resp = mint(localhub, "alice", {"Authorization": f"{scheme} {secret}"})
        assert resp.status_code == 201
        assert whoami(localhub, resp.json()["token"]) == "alice"


def test_a_bot_login_gets_no_token_here(localhub: LocalhubServer) -> None:
    """An App's `<slug>[bot]` account acts only through installation tokens; a token minted
    for that login beforehand would become the App's once it is registered."""
    assert mint(localhub, "memrepo[bot]", operator_headers(localhub)).status_code == 422


def test_the_operator_token_is_made_once_readable_by_its_owner_only(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with LocalhubServer(data):
        first = read_operator_token(data)
    assert first and first.startswith("lho_")
    assert mode(data / OPERATOR_FILE) == 0o600
    with LocalhubServer(data) as again:
        assert read_operator_token(data) == first
        assert mint(again, "alice", {"Authorization": f"Bearer {first}"}).status_code == 201


def test_registering_and_installing_an_app_need_the_operator_credential(localhub: LocalhubServer) -> None:
    """An App's answer holds its private key, and an installation writes to its account's
    repositories."""
    user_token = localhub_token(localhub, "alice")
    spec = {"name": "memrepo", "owner": "acme"}
    for headers in ({}, {"Authorization": f"token {user_token}"}):
        assert requests.post(f"{localhub.url}/_localhub/apps", json=spec, headers=headers,
                             timeout=30).status_code in (401, 403)
    assert localhub.hub.store.one("SELECT COUNT(*) AS n FROM apps")["n"] == 0
    app = requests.post(f"{localhub.url}/_localhub/apps", json=spec, headers=operator_headers(localhub),
                        timeout=30).json()
    url = f"{localhub.url}/_localhub/apps/{app['id']}/installations"
    for account in ("alice", "newcomer"):
        assert requests.post(url, json={"account": account}, timeout=10).status_code == 401
        assert requests.post(url, json={"account": account}, headers=operator_headers(localhub),
                             timeout=10).status_code == 201


def test_branch_protection_needs_the_operator_credential(localhub: LocalhubServer) -> None:
    """localhub's own protection endpoint is the operator's; an admin of the repository sets
    protection on GitHub through GitHub's own API, which localhub does not model."""
    owner = localhub_token(localhub, "alice")
    requests.post(f"{localhub.api_url}/user/repos", json={"name": "memory"},
                  headers={"Authorization": f"token {owner}"}, timeout=10).raise_for_status()
    url = f"{localhub.url}/_localhub/repos/alice/memory/protection"
    rule = {"branch": "main", "required_approving_review_count": 1}
    stranger = localhub_token(localhub, "bob")
    assert requests.post(url, json=rule, timeout=10).status_code == 401
    assert requests.post(url, json=rule, headers={"Authorization": f"token {stranger}"}, timeout=10).status_code == 403
    assert requests.post(url, json=rule, headers={"Authorization": f"token {owner}"}, timeout=10).status_code == 403
    assert requests.get(url, headers=operator_headers(localhub), timeout=10).json() == {}
    assert requests.post(url, json=rule, headers=operator_headers(localhub), timeout=10).status_code == 200
    assert requests.get(url, headers=operator_headers(localhub), timeout=10).json()["main"]


# ---------------------------------------------------------------------------------- loopback only
def test_admin_endpoints_answer_only_requests_addressed_to_loopback(localhub: LocalhubServer) -> None:
    """A page on evil.example whose name a browser was made to resolve to 127.0.0.1 reaches
    localhub with `Host: evil.example`: localhub's own endpoints refuse it."""
    port = localhub.port
    for host in ("evil.example", f"evil.example:{port}", "192.168.1.5", "localhost.evil.example"):
        for method, path in (("GET", "health"), ("POST", "tokens"), ("GET", "faults"), ("GET", "deliveries"),
                             ("POST", "apps")):
            resp = requests.request(method, f"{localhub.url}/_localhub/{path}", json={"login": "mallory"},
                                    headers={"Host": host}, timeout=10)
            assert resp.status_code == 403, (host, path)
            assert "loopback" in resp.json()["message"]
    for host in ("localhost", f"localhost:{port}", f"127.0.0.1:{port}", "[::1]", f"[::1]:{port}", "127.0.0.2"):
        resp = requests.get(f"{localhub.url}/_localhub/health", headers={"Host": host}, timeout=10)
        assert resp.status_code == 200, host
    assert localhub.hub.user_by_login("mallory") is None


def test_github_endpoints_answer_any_host(localhub: LocalhubServer) -> None:
    token = localhub_token(localhub, "alice")
    headers = {"Host": "forge.example", "Authorization": f"token {token}"}
    resp = requests.get(f"{localhub.api_url}/user", headers=headers, timeout=10)
    assert resp.status_code == 200


# ---------------------------------------------------------------------------------- the database
def test_the_database_is_readable_by_its_owner_only(localhub: LocalhubServer) -> None:
    localhub_token(localhub, "alice")
    data = localhub.hub.data_dir
    files = [data / name for name in ("localhub.sqlite3", "localhub.sqlite3-wal", "localhub.sqlite3-shm")]
    assert all(path.exists() for path in files)
    assert [mode(path) for path in files] == [0o600] * 3


def test_an_old_database_is_made_private_when_opened(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "localhub.sqlite3").touch(mode=0o644)
    with LocalhubServer(data):
        assert mode(data / "localhub.sqlite3") == 0o600


def test_tokens_are_kept_as_hashes(localhub: LocalhubServer) -> None:
    token = localhub_token(localhub, "alice")
    database = (localhub.hub.data_dir / "localhub.sqlite3").read_bytes()
    wal = (localhub.hub.data_dir / "localhub.sqlite3-wal").read_bytes()
    assert token.encode() not in database + wal
    assert whoami(localhub, token) == "alice"


def test_plain_tokens_of_an_old_database_are_hashed_and_keep_working(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    old = sqlite3.connect(data / "localhub.sqlite3")
    old.executescript(
        "CREATE TABLE users (id INTEGER PRIMARY KEY, login TEXT NOT NULL UNIQUE COLLATE NOCASE,"
        " type TEXT NOT NULL DEFAULT 'User', name TEXT, email TEXT, created_at REAL NOT NULL);"
        "CREATE TABLE tokens (token TEXT PRIMARY KEY, user_id INTEGER NOT NULL REFERENCES users(id),"
        " installation_id INTEGER, expires_at REAL, created_at REAL NOT NULL);"
        "INSERT INTO users (id, login, created_at) VALUES (1001, 'alice', 0);"
        "INSERT INTO tokens (token, user_id, created_at) VALUES ('ghp_oldplaintoken', 1001, 0);")
    old.commit()
    old.close()
    with LocalhubServer(data) as server:
        assert whoami(server, "ghp_oldplaintoken") == "alice"
    check = sqlite3.connect(data / "localhub.sqlite3")
    kept = [row[0] for row in check.execute("SELECT token_hash FROM tokens")]
    check.close()
    assert kept and "ghp_oldplaintoken" not in kept
    assert b"ghp_oldplaintoken" not in b"".join(path.read_bytes() for path in data.glob("localhub.sqlite3*"))


# ---------------------------------------------------------------------------------- requests made
def test_requests_are_counted_by_account_and_kind(localhub: LocalhubServer, tmp_path: Path) -> None:
    """`GET /_localhub/requests` says what each account asked of the REST API (by method) and
    of the git transport: what a budget is measured with. Only the operator may read it."""
    token = localhub_token(localhub, "alice")
    auth = {"Authorization": f"token {token}"}
    assert requests.post(f"{localhub.api_url}/user/repos", json={"name": "memory"}, headers=auth,
                         timeout=10).status_code == 201
    for _ in range(3):
        assert requests.get(f"{localhub.api_url}/repos/alice/memory", headers=auth, timeout=10).status_code == 200
    refs = requests.get(f"{localhub.url}/alice/memory.git/info/refs", params={"service": "git-upload-pack"},
                        auth=("x-access-token", token), timeout=10)
    assert refs.status_code == 200
    url = f"{localhub.url}/_localhub/requests"
    assert requests.get(url, headers=auth, timeout=10).status_code == 403
    counted = requests.get(url, headers=operator_headers(localhub), timeout=10).json()["by_account"]["alice"]
    assert counted == {"POST": 1, "GET": 3, "git": 1}
