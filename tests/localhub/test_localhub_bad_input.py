"""Bad input to localhub gets GitHub's status codes and messages, never a crash."""

from __future__ import annotations

import subprocess
from pathlib import Path

import requests

from localhub.server import LocalhubServer
from tests.conftest import localhub_token


def api(server: LocalhubServer, token: str, method: str, path: str, **kwargs: object) -> requests.Response:
    return requests.request(method, f"{server.api_url}{path}", headers={"Authorization": f"token {token}"},
                            timeout=10, **kwargs)  # type: ignore[arg-type]


def make_repo_with_branch(server: LocalhubServer, token: str, tmp_path: Path) -> None:
    assert api(server, token, "POST", "/user/repos", json={"name": "memory", "auto_init": True}).status_code == 201
    url = server.url.replace("http://", f"http://x-access-token:{token}@") + "/alice/memory.git"
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", url, str(clone)], check=True)
    subprocess.run(["git", "checkout", "-qb", "topic"], cwd=clone, check=True)
    (clone / "note.md").write_text("note\n")
    subprocess.run(["git", "add", "-A"], cwd=clone, check=True)
    subprocess.run(["git", "commit", "-qm", "note"], cwd=clone, check=True)
    subprocess.run(["git", "push", "-q", "origin", "topic"], cwd=clone, check=True)


def test_malformed_json_is_400(localhub: LocalhubServer) -> None:
    token = localhub_token(localhub, "alice")
    resp = requests.post(f"{localhub.api_url}/user/repos", data=b"{not json", timeout=10,
                         headers={"Authorization": f"token {token}", "Content-Type": "application/json"})
    assert resp.status_code == 400 and resp.json()["message"] == "Problems parsing JSON"


def test_unknown_things_are_404(localhub: LocalhubServer, tmp_path: Path) -> None:
    token = localhub_token(localhub, "alice")
    make_repo_with_branch(localhub, token, tmp_path)
    for path in ("/repos/alice/nope", "/repos/alice/memory/pulls/99", "/repos/alice/memory/git/ref/heads/nope",
                 "/repos/nobody/memory", "/no/such/endpoint"):
        resp = api(localhub, token, "GET", path)
        assert resp.status_code == 404, path
        assert resp.json()["message"] == "Not Found"


def test_duplicate_ref_and_closed_merge(localhub: LocalhubServer, tmp_path: Path) -> None:
    token = localhub_token(localhub, "alice")
    make_repo_with_branch(localhub, token, tmp_path)
    sha = api(localhub, token, "GET", "/repos/alice/memory/git/ref/heads/topic").json()["object"]["sha"]
    dup = api(localhub, token, "POST", "/repos/alice/memory/git/refs", json={"ref": "refs/heads/topic", "sha": sha})
    assert dup.status_code == 422 and dup.json()["message"] == "Reference already exists"
    pull = api(localhub, token, "POST", "/repos/alice/memory/pulls",
               json={"title": "t", "head": "topic", "base": "main"}).json()
    api(localhub, token, "PATCH", f"/repos/alice/memory/pulls/{pull['number']}", json={"state": "closed"})
    merge = api(localhub, token, "PUT", f"/repos/alice/memory/pulls/{pull['number']}/merge", json={"sha": sha})
    assert merge.status_code == 405 and merge.json()["message"] == "Pull Request is not mergeable"


def test_oversized_body_is_413(tmp_path: Path) -> None:
    with LocalhubServer(tmp_path / "data") as server:
        server.app.config["MAX_CONTENT_LENGTH"] = 4096  # Flask reads it per request
        token = localhub_token(server, "alice")
        resp = requests.post(f"{server.api_url}/user/repos", data=b"{" + b" " * 10_000 + b"}", timeout=10,
                             headers={"Authorization": f"token {token}", "Content-Type": "application/json"})
        assert resp.status_code == 413
        assert set(resp.json()) >= {"message", "documentation_url"}
        assert requests.get(f"{server.url}/_localhub/health", timeout=10).status_code == 200


def test_json_is_read_whatever_the_content_type(localhub: LocalhubServer) -> None:
    """`curl -d '{...}'` sends application/x-www-form-urlencoded; GitHub's routes read JSON
    anyway (they need a token in `Authorization`, which no cross-origin page can send;
    localhub's own endpoints take JSON only, tests/abuse/test_abuse_cross_origin.py)."""
    token = localhub_token(localhub, "ada")
    resp = requests.post(f"{localhub.api_url}/user/repos", data='{"name": "memory"}', timeout=10,
                         headers={"Content-Type": "application/x-www-form-urlencoded",
                                  "Authorization": f"token {token}"})
    assert resp.status_code == 201 and resp.json()["full_name"] == "ada/memory"
