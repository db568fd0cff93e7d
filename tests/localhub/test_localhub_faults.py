"""localhub's fault injection: faults answer ahead of auth, fire exactly `times` times, match
globs with or without `/api/v3`, can let the real effect happen first (`apply`), delay, and
break git smart HTTP as well as REST."""

from __future__ import annotations

import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import requests

from localhub.server import LocalhubServer
from tests.conftest import armed_faults, disarm_faults, localhub_token, operator_headers


def arm(server: LocalhubServer, **spec: Any) -> dict[str, Any]:
    resp = requests.post(f"{server.url}/_localhub/faults", json=spec, headers=operator_headers(server), timeout=10)
    assert resp.status_code == 201, resp.text
    return resp.json()


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"token {token}"}


def make_repo(server: LocalhubServer, token: str, name: str = "memory") -> None:
    resp = requests.post(f"{server.api_url}/user/repos", json={"name": name, "auto_init": True},
                         headers=auth(token), timeout=30)
    assert resp.status_code == 201, resp.text


def get_repo(server: LocalhubServer, token: str, full_name: str = "alice/memory", **kw: Any) -> requests.Response:
    return requests.get(f"{server.api_url}/repos/{full_name}", headers=auth(token), timeout=kw.pop("timeout", 10), **kw)


def test_a_fault_answers_before_authentication_with_githubs_error_shape(localhub: LocalhubServer) -> None:
    fault = arm(localhub, method="GET", path="/api/v3/repos/*", status=503)
    assert (fault["remaining"], fault["times"], fault["apply"]) == (1, 1, False)
    resp = get_repo(localhub, "ghp_not_a_token")
    assert resp.status_code == 503
    assert resp.json() == {"message": "Service Unavailable", "documentation_url": "https://docs.github.com/rest",
                           "status": "503"}
    assert resp.headers["X-Localhub-Fault"] == str(fault["id"])
    assert resp.headers["X-RateLimit-Limit"] == "5000"  # GitHub's headers still come along
    # Used up: the same request now meets authentication.
    assert get_repo(localhub, "ghp_not_a_token").status_code == 401


def test_times_counts_matching_requests_only(localhub: LocalhubServer) -> None:
    token = localhub_token(localhub, "alice")
    make_repo(localhub, token)
    arm(localhub, method="GET", path="/repos/alice/memory", times=2)
    # A request the fault does not match leaves the count alone.
    assert requests.post(f"{localhub.api_url}/user/repos", json={"name": "other"}, headers=auth(token),
                         timeout=10).status_code == 201
    assert [get_repo(localhub, token).status_code for _ in range(3)] == [500, 500, 200]
    listed = armed_faults(localhub)
    assert [(f["remaining"], f["hits"]) for f in listed] == [(0, 2)]


def test_times_holds_under_concurrent_requests(localhub: LocalhubServer) -> None:
    token = localhub_token(localhub, "alice")
    make_repo(localhub, token)
    arm(localhub, method="GET", path="/repos/alice/memory", times=5)
    with ThreadPoolExecutor(max_workers=8) as pool:
        codes = list(pool.map(lambda _: get_repo(localhub, token).status_code, range(20)))
    assert sorted(codes) == [200] * 15 + [500] * 5


@pytest.mark.parametrize("pattern", ["/api/v3/repos/*/memory", "/repos/*/memory", "repos/alice/mem*", "*/memory"])
def test_globs_match_with_or_without_the_api_prefix(localhub: LocalhubServer, pattern: str) -> None:
    token = localhub_token(localhub, "alice")
    make_repo(localhub, token)
    arm(localhub, method="get", path=pattern, status=502)
    assert get_repo(localhub, token).status_code == 502


@pytest.mark.parametrize(("method", "pattern"), [("POST", "/repos/*/memory"), ("GET", "/repos/*/other"),
                                                 ("GET", "/api/v3/repos/alice")])
def test_a_fault_for_another_method_or_path_does_not_fire(localhub: LocalhubServer, method: str,
                                                          pattern: str) -> None:
    token = localhub_token(localhub, "alice")
    make_repo(localhub, token)
    arm(localhub, method=method, path=pattern)
    assert get_repo(localhub, token).status_code == 200


def test_apply_performs_the_real_effect_then_answers_with_the_fault(localhub: LocalhubServer) -> None:
    token = localhub_token(localhub, "alice")
    arm(localhub, method="POST", path="/user/repos", status=500, apply=True)
    resp = requests.post(f"{localhub.api_url}/user/repos", json={"name": "memory"}, headers=auth(token), timeout=10)
    assert resp.status_code == 500
    assert resp.json()["message"] == "Internal Server Error"
    # GitHub said 500, but the repository was made: a retry meets "already exists".
    assert get_repo(localhub, token).status_code == 200
    again = requests.post(f"{localhub.api_url}/user/repos", json={"name": "memory"}, headers=auth(token), timeout=10)
    assert again.status_code == 422


def test_without_apply_the_request_has_no_effect(localhub: LocalhubServer) -> None:
    token = localhub_token(localhub, "alice")
    arm(localhub, method="POST", path="/user/repos", status=500)
    resp = requests.post(f"{localhub.api_url}/user/repos", json={"name": "memory"}, headers=auth(token), timeout=10)
    assert resp.status_code == 500
    assert get_repo(localhub, token).status_code == 404


def test_body_and_headers_are_returned_as_given(localhub: LocalhubServer) -> None:
    token = localhub_token(localhub, "alice")
    make_repo(localhub, token)
    arm(localhub, method="GET", path="/repos/*/*", status=403,
        body={"message": "API rate limit exceeded for user ID 1.", "documentation_url": "https://docs.github.com/rest"},
        headers={"Retry-After": 7, "X-RateLimit-Remaining": "0"})
    arm(localhub, method="GET", path="/repos/*/*", status=502, body="<html>Bad gateway</html>")
    limited = get_repo(localhub, token)
    assert limited.status_code == 403
    assert limited.json()["message"].startswith("API rate limit exceeded")
    assert limited.headers["Retry-After"] == "7"
    assert limited.headers["X-RateLimit-Remaining"] == "0"  # the fault's headers win over localhub's own
    assert limited.headers["X-RateLimit-Limit"] == "5000"
    gateway = get_repo(localhub, token)
    assert (gateway.status_code, gateway.text) == (502, "<html>Bad gateway</html>")
    assert gateway.headers["Content-Type"].startswith("text/plain")


def test_delay_holds_the_answer_back(localhub: LocalhubServer) -> None:
    token = localhub_token(localhub, "alice")
    make_repo(localhub, token)
    arm(localhub, method="GET", path="/repos/alice/memory", status=504, delay_ms=300)
    start = time.monotonic()
    assert get_repo(localhub, token).status_code == 504
    assert time.monotonic() - start >= 0.3
    arm(localhub, method="GET", path="/repos/alice/memory", delay_ms=2000)
    with pytest.raises(requests.exceptions.ReadTimeout):
        get_repo(localhub, token, timeout=0.3)


def test_delay_with_apply_lets_the_effect_happen_while_the_client_times_out(localhub: LocalhubServer) -> None:
    token = localhub_token(localhub, "alice")
    arm(localhub, method="POST", path="/user/repos", apply=True, delay_ms=1500)
    with pytest.raises(requests.exceptions.ReadTimeout):
        requests.post(f"{localhub.api_url}/user/repos", json={"name": "memory"}, headers=auth(token), timeout=0.5)
    assert get_repo(localhub, token).status_code == 200


def test_delete_clears_every_fault_and_admin_paths_are_never_faulted(localhub: LocalhubServer) -> None:
    token = localhub_token(localhub, "alice")
    make_repo(localhub, token)
    first = arm(localhub, method="*", path="*", times=100)
    second = arm(localhub, method="GET", path="/repos/*/*", status=404)
    listed = armed_faults(localhub)
    assert [(f["id"], f["remaining"]) for f in listed] == [(first["id"], 100), (second["id"], 1)]
    assert requests.delete(f"{localhub.url}/_localhub/faults/{first['id']}", headers=operator_headers(localhub),
                           timeout=10).status_code == 204
    assert get_repo(localhub, token).status_code == 404
    arm(localhub, method="*", path="*")
    assert requests.delete(f"{localhub.url}/_localhub/faults", headers=operator_headers(localhub),
                           timeout=10).status_code == 204
    assert armed_faults(localhub) == []
    assert get_repo(localhub, token).status_code == 200


@pytest.mark.parametrize(("spec", "field"), [
    ({"method": "GET"}, "path"),
    ({"path": "  "}, "path"),
    ({"path": "/x", "method": "FETCH"}, "method"),
    ({"path": "/x", "status": 700}, "status"),
    ({"path": "/x", "status": "500"}, "status"),
    ({"path": "/x", "times": 0}, "times"),
    ({"path": "/x", "times": 1.5}, "times"),
    ({"path": "/x", "apply": "yes"}, "apply"),
    ({"path": "/x", "delay_ms": -1}, "delay_ms"),
    ({"path": "/x", "headers": ["Retry-After: 1"]}, "headers"),
    ({"path": "/x", "headers": {"X-A": "1\r\nX-B: 2"}}, "headers"),
    ({"path": "/x", "body": 42}, "body"),
    ({"path": "/x", "time": 2}, "time"),
])
def test_bad_fault_specs_are_githubs_422(localhub: LocalhubServer, spec: dict[str, Any], field: str) -> None:
    resp = requests.post(f"{localhub.url}/_localhub/faults", json=spec, headers=operator_headers(localhub), timeout=10)
    assert resp.status_code == 422
    body = resp.json()
    assert body["message"] == "Validation Failed"
    assert body["documentation_url"].startswith("https://docs.github.com/")
    assert body["errors"][0]["field"] == field
    assert body["errors"][0]["message"]
    assert armed_faults(localhub) == []


def test_a_fault_on_git_smart_http_makes_git_fail(localhub: LocalhubServer, tmp_path: Path) -> None:
    token = localhub_token(localhub, "alice")
    make_repo(localhub, token)
    url = localhub.url.replace("http://", f"http://x-access-token:{token}@") + "/alice/memory.git"
    env = {"GIT_TERMINAL_PROMPT": "0", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    arm(localhub, method="GET", path="/alice/memory.git/info/refs", status=500, times=5)
    failed = subprocess.run(["git", "ls-remote", url], capture_output=True, text=True, env=env)
    assert failed.returncode != 0
    assert "500" in failed.stderr
    disarm_faults(localhub)
    done = subprocess.run(["git", "ls-remote", url, "refs/heads/main"], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("refs/heads/main")
