"""localhub's read-only web pages: the `html_url` of a pull request (and of its repository)
opens a page with its title, body, files and reviews, escaped and without any script; a private
repository is a 404 to anyone who may not read it, as the API is."""

from __future__ import annotations

import re
from pathlib import Path

import github
import pytest
import requests

from bot.forge.client import ForgeClient
from bot.forge.credentials import TokenCredentials
from bot.forge.retry import RetryPolicy
from bot.forge.shapes import NewPullRequest
from localhub.server import LocalhubServer
from tests.conftest import git, localhub_token

FAST = RetryPolicy(max_total_seconds=5.0, max_attempts=3, backoff_base=0.05, backoff_cap=0.2)
HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>'


@pytest.fixture
def pull(localhub: LocalhubServer, tmp_path: Path) -> tuple[LocalhubServer, str, int]:
    token = localhub_token(localhub, "alice")
    github.Github(auth=github.Auth.Token(token), base_url=localhub.api_url, retry=None).get_user().create_repo("memory")
    work = tmp_path / "work"
    url = localhub.url.replace("http://", f"http://x-access-token:{token}@") + "/alice/memory.git"
    git(tmp_path, "init", "-q", "-b", "main", str(work))
    (work / "notes.md").write_text("first\n")
    git(work, "add", ".")
    git(work, "commit", "-qm", "first")
    git(work, "push", "-q", url, "main")
    git(work, "switch", "-qc", "memrepo/edit/a1/1234abcd")
    (work / "notes.md").write_text(f"first\nsecond {HOSTILE}\n")
    git(work, "commit", "-qam", "second")
    git(work, "push", "-q", url, "memrepo/edit/a1/1234abcd")
    client = ForgeClient("alice/memory", TokenCredentials(token), base_url=localhub.api_url, policy=FAST,
                         min_write_interval=0.0, timeout=10)
    pr = client.open_pull_request(NewPullRequest(head="memrepo/edit/a1/1234abcd", base="main",
                                                 title=f"Remember {HOSTILE}", body=f"Because {HOSTILE}",
                                                 labels=("memrepo:agent-edit",)))
    bob = localhub_token(localhub, "bob")
    github.Github(auth=github.Auth.Token(bob), base_url=localhub.api_url, retry=None).get_repo(
        "alice/memory").get_pull(pr.number).create_review(body=f"Looks {HOSTILE}", event="COMMENT")
    return localhub, pr.url, pr.number


def test_the_pull_requests_html_url_opens_its_page(pull: tuple[LocalhubServer, str, int]) -> None:
    server, url, number = pull
    assert url == f"{server.url}/alice/memory/pull/{number}"
    resp = requests.get(url, timeout=10)
    assert resp.status_code == 200 and resp.headers["Content-Type"].startswith("text/html")
    page = resp.text
    assert f"#{number}" in page and "Remember" in page and "Because" in page
    assert "notes.md" in page and "+second" in page
    assert "bob" in page and "COMMENTED" in page
    assert "memrepo:agent-edit" in page
    assert f'href="{server.url}/alice/memory"' in page


def test_the_page_is_escaped_and_runs_no_script(pull: tuple[LocalhubServer, str, int]) -> None:
    _server, url, _ = pull
    resp = requests.get(url, timeout=10)
    assert "<script" not in resp.text.lower() and "<img" not in resp.text.lower()
    assert resp.text.count("&lt;script&gt;") >= 4  # title, body, diff, review
    policy = resp.headers["Content-Security-Policy"]
    assert "default-src 'none'" in policy and "script-src" not in policy
    assert resp.headers["X-Content-Type-Options"] == "nosniff"


def test_the_repository_page_lists_its_open_pull_requests(pull: tuple[LocalhubServer, str, int]) -> None:
    server, url, number = pull
    resp = requests.get(f"{server.url}/alice/memory", timeout=10)
    assert resp.status_code == 200
    assert re.search(rf'href="{re.escape(url)}">#{number} ', resp.text)


def test_unknown_and_private_pages_are_404(pull: tuple[LocalhubServer, str, int]) -> None:
    server, _url, number = pull
    assert requests.get(f"{server.url}/alice/memory/pull/{number + 1}", timeout=10).status_code == 404
    assert requests.get(f"{server.url}/alice/nothing/pull/1", timeout=10).status_code == 404
    assert requests.get(f"{server.url}/nobody/memory", timeout=10).status_code == 404
    token = localhub_token(server, "carol")
    gh = github.Github(auth=github.Auth.Token(token), base_url=server.api_url, retry=None)
    gh.get_user().create_repo("secret", private=True)
    assert requests.get(f"{server.url}/carol/secret", timeout=10).status_code == 404
    assert requests.get(f"{server.url}/carol/secret", headers={"Authorization": f"token {token}"},
                        timeout=10).status_code == 200
    # the API's own answers are untouched
    api = requests.get(f"{server.url}/api/v3", timeout=10)
    assert api.headers["Content-Type"].startswith("application/json")
