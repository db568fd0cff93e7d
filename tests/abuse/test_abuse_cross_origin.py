"""A hostile web page and a hostile local process against every server memrepo runs.

A page open in the user's browser reaches loopback ports too. Without asking first (no CORS
preflight) it can send a "simple" request: GET, or POST with a form or `text/plain` body, and
no header of its own, so no credential but a cookie or cached Basic credentials; a page whose
name was rebound to 127.0.0.1 sends anything, but names itself in `Host`. A local process sends
anything but holds no credential it was not given. So for each server and each route that
changes state: that request changes nothing and is refused; with the credential (and JSON) it
works. localhub's git transport, reached by raw requests (no client normalising the path),
answers a path that climbs out of a repository with a 404, as GitHub does.
"""

from __future__ import annotations

import base64
import http.client
import json
from pathlib import Path
from typing import Any

import pytest
import redis
import requests
from flask.testing import FlaskClient

from bot.mcp.transports import browser_refusal
from bot.memfs.store.repo import MemoryRepo
from localhub import access
from localhub.server import LocalhubServer
from tests.conftest import armed_faults, localhub_token, operator_headers
from tests.mcp.test_mcp_auth import ACCEPT, INITIALIZE
from tests.mcp.test_mcp_transports import HttpServer, command
from tests.webhooks.deliveries import pull_request, queued

EVIL = "http://evil.example"
# What a page sends without a preflight: a text/plain body and its own Origin, no credential.
SIMPLE = {"Content-Type": "text/plain;charset=UTF-8", "Origin": EVIL, "Sec-Fetch-Site": "cross-site"}
FORM = {"Content-Type": "application/x-www-form-urlencoded", "Origin": EVIL, "Sec-Fetch-Site": "cross-site"}


# ------------------------------------------------------------------------------ localhub: the rule
@pytest.mark.parametrize(("method", "path", "operator", "credential", "content_type", "body", "status"), [
    ("POST", "/_localhub/faults", False, False, "text/plain", True, 401),
    ("POST", "/_localhub/faults", False, False, "application/json", True, 401),
    ("POST", "/_localhub/faults", False, True, "application/json", True, 403),  # a user's token
    ("POST", "/_localhub/faults", True, False, "text/plain", True, 415),
    ("POST", "/_localhub/faults", True, False, "application/x-www-form-urlencoded", True, 415),
    ("POST", "/_localhub/faults", True, False, "multipart/form-data", True, 415),
    ("POST", "/_localhub/faults", True, False, None, True, 415),
    ("POST", "/_localhub/faults", True, False, "application/json", True, None),
    ("DELETE", "/_localhub/faults", True, False, None, False, None),
    ("DELETE", "/_localhub/faults/3", False, False, None, False, 401),
    ("POST", "/_localhub/delivery", False, False, "text/plain", True, 401),
    ("PUT", "/_localhub/anything/added/later", False, False, "application/json", True, 401),
    ("PATCH", "/_localhub/anything/added/later", True, False, "text/plain", True, 415),
    ("GET", "/_localhub/faults", False, False, None, False, 401),
    ("GET", "/_localhub/deliveries", False, False, None, False, 401),
    ("GET", "/_localhub/repos/a/b/protection", False, False, None, False, 401),
    ("GET", "/_localhub/faults", True, False, None, False, None),
    ("GET", "/_localhub/health", False, False, None, False, None),
    ("HEAD", "/_localhub/health", False, False, None, False, None),
    ("POST", "/_localhub/health", False, False, "text/plain", True, 401),
])
def test_localhubs_own_endpoints_need_the_operator_and_json(method: str, path: str, operator: bool,
                                                            credential: bool, content_type: str | None,
                                                            body: bool, status: int | None) -> None:
    refused = access.admin_refusal(method, path, operator=operator, credential=credential, content_type=content_type,
                           has_body=body)
    assert (refused.status if refused else None) == status
    if refused is not None:
        assert "\n" not in refused.message and "/_localhub/" in refused.message


@pytest.mark.parametrize(("path", "rule", "admin"), [
    ("/_localhub/faults", None, True),
    ("//_localhub/faults", None, True),
    ("/x/../_localhub/faults", None, True),
    ("/_localhub", None, True),
    ("/_localhubx/faults", None, False),
    ("/api/v3/_localhub/faults", None, False),
    ("/alice/memory.git/info/refs", "/<owner>/<repo>.git/<path:service>", False),
    ("/anything", "/_localhub/faults", True),
])
def test_which_requests_are_for_localhubs_own_endpoints(path: str, rule: str | None, admin: bool) -> None:
    assert access.is_admin(path, rule) is admin


# ------------------------------------------------------------------------------ localhub: served
def _owned_repo(server: LocalhubServer) -> str:
    token = localhub_token(server, "sam")
    requests.post(f"{server.api_url}/user/repos", json={"name": "memory"}, headers={"Authorization": f"token {token}"},
                  timeout=10).raise_for_status()
    return token


def test_a_page_cannot_arm_a_fault_that_makes_a_stranger_an_admin(localhub: LocalhubServer) -> None:
    """The attack: a fault answering the collaborator-permission call with `admin` for a
    stranger, whose approval then counted. Sent as a page sends it, it is refused and nothing is
    armed; the permission stays the truth."""
    owner = _owned_repo(localhub)
    localhub_token(localhub, "eve")
    fault = {"method": "GET", "path": "/repos/sam/memory/collaborators/eve/permission", "status": 200, "times": 100,
             "body": {"permission": "admin", "role_name": "admin", "user": {"login": "eve"}}}
    for headers in (SIMPLE, FORM, {"Content-Type": "application/json"}):
        sent = requests.post(f"{localhub.url}/_localhub/faults", data=json.dumps(fault), headers=headers, timeout=10)
        assert sent.status_code == 401, sent.text
        assert "operator credential" in sent.json()["message"]
    assert armed_faults(localhub) == []
    seen = requests.get(f"{localhub.api_url}/repos/sam/memory/collaborators/eve/permission",
                        headers={"Authorization": f"token {owner}"}, timeout=10)
    assert seen.status_code == 200 and seen.json()["permission"] == "read"  # a public repository
    assert "X-Localhub-Fault" not in seen.headers


def state(server: LocalhubServer) -> dict[str, Any]:
    """Everything localhub's own endpoints can change, read beside them."""
    hub = server.hub
    count = {table: hub.store.one(f"SELECT COUNT(*) AS n FROM {table}")["n"]
             for table in ("users", "tokens", "apps", "installations", "repos")}
    protection = [row["protection"] for row in hub.store.all("SELECT protection FROM repos ORDER BY id")]
    delivery = requests.get(f"{server.url}/_localhub/delivery", headers=operator_headers(server), timeout=10).json()
    return {**count, "protection": protection, "delivery": delivery, "faults": armed_faults(server)}


# Every route of localhub's own that changes state, with a body that would succeed.
def _routes(app_id: int) -> list[tuple[str, str, dict[str, Any] | None]]:
    return [
        ("POST", "/_localhub/tokens", {"login": "mallory"}),
        ("POST", "/_localhub/tokens", {"login": "sam"}),
        ("POST", "/_localhub/faults", {"method": "*", "path": "*", "status": 503, "times": 10}),
        ("DELETE", "/_localhub/faults/1", None),
        ("DELETE", "/_localhub/faults", None),
        ("POST", "/_localhub/delivery", {"mode": "drop"}),
        ("POST", "/_localhub/apps", {"name": "evil", "owner": "sam"}),
        ("POST", f"/_localhub/apps/{app_id}/installations", {"account": "sam"}),
        ("POST", "/_localhub/users/sam/repos", {"name": "planted"}),
        ("POST", "/_localhub/repos/sam/memory/protection", {"branch": "main", "enabled": False}),
    ]


def test_every_state_changing_route_of_localhubs_own_refuses_a_page_and_works_for_the_operator(
        localhub: LocalhubServer) -> None:
    _owned_repo(localhub)
    made = requests.post(f"{localhub.url}/_localhub/apps", json={"name": "memrepo", "owner": "sam"},
                         headers=operator_headers(localhub), timeout=30)
    app_id = made.json()["id"]
    requests.post(f"{localhub.url}/_localhub/repos/sam/memory/protection", json={"required_approving_review_count": 1},
                  headers=operator_headers(localhub), timeout=10).raise_for_status()
    requests.post(f"{localhub.url}/_localhub/faults", json={"method": "GET", "path": "/nothing", "times": 5},
                  headers=operator_headers(localhub), timeout=10).raise_for_status()
    routes = _routes(app_id)
    # The list covers every route of localhub's own that takes a method other than GET.
    changing = {(method, rule.rule) for rule in localhub.app.url_map.iter_rules() if rule.rule.startswith("/_localhub")
                for method in rule.methods - {"GET", "HEAD", "OPTIONS"}}
    adapter = localhub.app.url_map.bind("127.0.0.1")
    covered = {(method, adapter.match(path, method=method, return_rule=True)[0].rule) for method, path, _ in routes}
    assert changing <= covered, changing - covered

    before = state(localhub)
    for method, path, body in routes:
        for headers in (SIMPLE, FORM):
            resp = requests.request(method, localhub.url + path, data=json.dumps(body) if body else None,
                                    headers=headers, timeout=10)
            assert resp.status_code == 401, (method, path, resp.text)
            assert "Access-Control-Allow-Origin" not in resp.headers
        # a user's token, even the owner's, is no operator credential
        owner = {"Authorization": f"token {localhub_token(localhub, 'sam')}", "Content-Type": "application/json"}
        assert requests.request(method, localhub.url + path, data=json.dumps(body) if body else None, headers=owner,
                                timeout=10).status_code == 403
        # the operator credential with a body that is not JSON by its type
        if body is not None:
            resp = requests.request(method, localhub.url + path, data=json.dumps(body),
                                    headers={**operator_headers(localhub), "Content-Type": "text/plain"}, timeout=10)
            assert resp.status_code == 415 and "application/json" in resp.json()["message"]
    after = state(localhub)
    assert {k: v for k, v in after.items() if k != "tokens"} == {k: v for k, v in before.items() if k != "tokens"}
    assert after["tokens"] == before["tokens"] + len(routes)  # only the owner's tokens made above
    assert localhub.hub.user_by_login("mallory") is None

    for method, path, body in routes:
        resp = requests.request(method, localhub.url + path, json=body, headers=operator_headers(localhub), timeout=30)
        assert resp.status_code in (200, 201, 204), (method, path, resp.text)


def test_localhub_sends_no_cors_headers(localhub: LocalhubServer) -> None:
    """A page may read no answer and send no preflighted request: no CORS header anywhere."""
    token = _owned_repo(localhub)
    for url in (f"{localhub.url}/_localhub/faults", f"{localhub.url}/_localhub/health",
                f"{localhub.api_url}/repos/sam/memory", f"{localhub.url}/sam/memory.git/info/refs"):
        for method in ("OPTIONS", "GET", "POST"):
            resp = requests.request(method, url, timeout=10, headers={
                "Origin": EVIL, "Access-Control-Request-Method": "POST", "Authorization": f"token {token}",
                "Access-Control-Request-Headers": "authorization, content-type"})
            assert not [h for h in resp.headers if h.lower().startswith("access-control-")], (method, url)


# ------------------------------------------------------------------------------ localhub: git paths
CLIMBING = [
    "/sam/memory.git/objects/../../../../etc/passwd",
    "/sam/memory.git/objects/%2e%2e/%2e%2e/config",
    "/sam/memory.git/objects/..%2f..%2fconfig",
    "/sam/memory.git/objects/../HEAD",
    "/sam/memory.git/objects//etc/passwd",
    "/sam/memory.git/objects/%2Fetc%2Fpasswd",
    "/sam/memory.git/HEAD/../../x",
    "/sam/memory.git/HEAD\\..\\..\\x",
    "/sam/memory.git/objects\\..\\..\\config",
    "/sam/memory.git/..%2f..%2f..%2fetc/passwd",
    "/sam/memory.git/info/refs?service=../../../etc/passwd",
    "/sam/memory.git/info/refs?service=/etc/passwd",
    "/sam/memory.git/info/refs?service=git-upload-pack/../x",
    "/sam/memory.git/info/refs?service=git-upload-pack%00",
    "/sam/memory.git/info/refs/../../../../etc/passwd",
    "/sam/memory.git/git-upload-pack/..",
    "/sam/memory.git/../../x",
    "/%2e%2e/memory.git/info/refs?service=git-upload-pack",
    "/sam/%2e%2e.git/info/refs?service=git-upload-pack",
]


def raw(server: LocalhubServer, method: str, path: str, headers: dict[str, str]) -> tuple[int, bytes]:
    """One request with the path sent byte for byte as given."""
    conn = http.client.HTTPConnection(server.host, server.port, timeout=10)
    try:
        conn.putrequest(method, path, skip_accept_encoding=True)
        for key, value in {**headers, "Content-Length": "0"}.items():
            conn.putheader(key, value)
        conn.endheaders()
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


@pytest.mark.parametrize("path", CLIMBING)
def test_a_git_path_that_climbs_out_of_the_repository_is_a_404(localhub: LocalhubServer, path: str) -> None:
    token = _owned_repo(localhub)
    basic = "Basic " + base64.b64encode(f"x-access-token:{token}".encode()).decode()
    for method in ("GET", "POST"):
        for headers in ({"Authorization": basic}, {}):
            status, body = raw(localhub, method, path, headers)
            assert status == 404, (method, path, headers, body)
            assert b"root:" not in body and b"[core]" not in body


def test_the_git_paths_git_asks_for_still_work(localhub: LocalhubServer) -> None:
    token = _owned_repo(localhub)
    basic = {"Authorization": "Basic " + base64.b64encode(f"x-access-token:{token}".encode()).decode()}
    assert raw(localhub, "GET", "/sam/memory.git/info/refs?service=git-upload-pack", basic)[0] == 200
    assert raw(localhub, "GET", "/sam/memory.git/HEAD", basic)[0] == 200
    assert raw(localhub, "GET", "/sam/memory.git/objects/info/packs", basic)[0] == 200
    assert raw(localhub, "GET", "/sam/memory.git/info/refs?service=git-upload-pack", {})[0] == 401


# ------------------------------------------------------------------------------ the receiver
def test_the_receiver_acts_on_no_delivery_a_page_can_send(redis_url: str, rclient: redis.Redis) -> None:
    """Its one state-changing route takes only GitHub's signature, a header no page can add
    without a preflight and a secret no page holds."""
    from tests.webhooks.deliveries import make_settings
    from webhooks.intake import create_app

    client: FlaskClient = create_app(make_settings(redis_url)).test_client()
    body = json.dumps(pull_request()).encode()
    for headers in (SIMPLE, FORM, {**SIMPLE, "X-GitHub-Event": "pull_request", "X-GitHub-Delivery": "1"}):
        resp = client.post("/webhooks/github", data=body, headers=headers)
        assert resp.status_code == 401
        assert "Access-Control-Allow-Origin" not in resp.headers
    assert queued(rclient) == [] and rclient.dbsize() == 0


# ------------------------------------------------------------------------------ the palace
def test_the_palace_has_no_route_that_changes_state(tmp_path: Path, memory: MemoryRepo) -> None:
    """Every page is read-only: a POST, PUT or DELETE a page sends is refused before anything."""
    from bot.palace.web import create_app

    app = create_app(memory.root)
    for rule in app.url_map.iter_rules():
        assert rule.methods is not None and rule.methods <= {"GET", "HEAD", "OPTIONS"}, rule
    client = app.test_client()
    head = memory.head_sha()
    for method in ("POST", "PUT", "DELETE", "PATCH"):
        resp = client.open("/", method=method, data="x", headers={**SIMPLE, "Host": "127.0.0.1"})
        assert resp.status_code == 405
        assert "Access-Control-Allow-Origin" not in resp.headers
    assert memory.head_sha() == head


# ------------------------------------------------------------------------------ memrepo mcp --http
@pytest.mark.parametrize(("headers", "token", "status"), [
    ({"host": "127.0.0.1:8000"}, False, None),
    ({"host": "localhost:8000", "origin": "http://localhost:8000", "sec-fetch-site": "same-origin"}, False, None),
    ({"host": "127.0.0.2:8000", "origin": "http://127.0.0.2:8000"}, False, None),
    ({"host": "127.0.0.1:8000", "origin": "http://evil.example"}, False, 403),
    ({"host": "127.0.0.1:8000", "origin": "http://localhost:3000"}, False, 403),  # another local page
    ({"host": "127.0.0.1:8000", "origin": "null"}, False, 403),
    ({"host": "127.0.0.1:8000", "sec-fetch-site": "cross-site"}, False, 403),
    ({"host": "127.0.0.1:8000", "sec-fetch-site": "same-site"}, False, 403),
    ({"host": "evil.example:8000", "origin": "http://evil.example:8000"}, False, 421),  # rebound to 127.0.0.1
    ({"host": "evil.example:8000"}, False, 421),
    ({"host": "memory.example.org"}, True, None),  # off loopback, behind its bearer token
    ({"host": "memory.example.org", "origin": "http://evil.example"}, True, 403),
])
def test_which_mcp_requests_a_page_may_have_sent(headers: dict[str, str], token: bool, status: int | None) -> None:
    refused = browser_refusal(headers, token=token)
    assert (refused[0] if refused else None) == status


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2"])
def test_mcp_over_http_answers_no_page_on_another_origin(memory: MemoryRepo, tmp_path: Path, host: str) -> None:
    """On 127.0.0.2 (loopback, so no token) the SDK checks neither Host nor Origin, and a page
    rebound to it called the tools; each such request is refused, an MCP client's is not."""
    server = HttpServer(command(memory, tmp_path, "--http", "0", "--host", host))
    head = memory.head_sha()
    try:
        port = server.url.split(":")[2].split("/")[0]
        for headers in ({**ACCEPT, **SIMPLE}, {**ACCEPT, "Origin": EVIL}, {**ACCEPT, "Sec-Fetch-Site": "cross-site"},
                        {**ACCEPT, "Host": f"evil.example:{port}", "Origin": f"http://evil.example:{port}"}):
            resp = requests.post(server.url, data=json.dumps(INITIALIZE), headers=headers, timeout=10)
            assert resp.status_code in (403, 421), (headers, resp.text)
            assert "Mcp-Session-Id" not in resp.headers and "\n" not in resp.json()["message"]
        assert requests.post(server.url, json=INITIALIZE, headers=ACCEPT, timeout=10).status_code == 200
    finally:
        server.stop()
    assert memory.head_sha() == head
