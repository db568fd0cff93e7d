"""localhub's repository webhooks: hooks through PyGithub, deliveries to a real HTTP receiver
on this machine, GitHub's headers and signatures, the deliveries API, redelivery, and the
delivery modes tests use to play the network's tricks (drop, duplicate, reverse, delay).

Every payload the receiver gets is validated, when its test ends, against both published
descriptions of its `<event>$<action>`: octokit's webhook schema
(tests/fixtures/github-webhooks/webhooks.json, trimmed from @octokit/webhooks-schemas) and the
request body of GitHub's OpenAPI description's `x-webhooks` (tests/fixtures/github-openapi/
webhooks.json, trimmed from @octokit/openapi); one that does not fit either fails the test.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import github
import pytest
import requests
from jsonschema import Draft7Validator
from jsonschema.exceptions import best_match

from localhub.server import LocalhubServer
from tests.conformance import FORMATS, load_spec, webhook_problem
from tests.conftest import localhub_token, operator_headers
from tests.localhub.test_localhub_issues import Checkout, client, commit_of, git_url, open_pull, run_git
from tests.localhub.test_localhub_permissions import _installation_token

SCHEMAS = Path(__file__).resolve().parents[1] / "fixtures" / "github-webhooks" / "webhooks.json"
SECRET = "It's a Secret to Everybody"
HOLD_LIMIT = 10  # seconds a held answer waits for the test at the most
ZERO = "0" * 40


# ---------------------------------------------------------------------------------- schemas
# Where octokit's community schemas (their repository is deprecated in favour of GitHub's own
# description, github.com/octokit/webhooks/issues/901) contradict GitHub's OpenAPI description,
# the description wins: (definition, keys down to the corrected schema, keys to add, reason).
# Loading fails if a place no longer exists, so a regenerated fixture gets these reviewed.
OCTOKIT_ERRATA: tuple[tuple[str, tuple[str, ...], dict[str, Any], str], ...] = (
    ("status$event", ("properties", "commit", "properties", "commit", "properties", "verification", "properties"),
     {"verified_at": {"type": ["string", "null"]}},
     "GitHub's description requires `verified_at` in a status event's commit verification "
     "(webhook-status, @octokit/openapi 23.0.2); octokit's 7.6.1 schema predates it and forbids it"),
)


@cache
def _definitions() -> dict[str, Any]:
    definitions: dict[str, Any] = json.loads(SCHEMAS.read_text())["definitions"]
    for name, location, added, reason in OCTOKIT_ERRATA:
        try:
            place = definitions[name]
            for key in location:
                place = place[key]
        except KeyError:
            raise LookupError(f"octokit erratum for {name} no longer applies: {reason}") from None
        place.update(added)
    return definitions


def schema_problem(event: str, payload: dict[str, Any]) -> str | None:
    """Why `payload` is not what GitHub sends for `event`, or None when it validates."""
    name = f"{event}${payload.get('action') or 'event'}"
    if name not in _definitions():
        return f"{name}: no schema in {SCHEMAS.name} (add it to trim.py's ROOTS)"
    check = Draft7Validator({"$ref": f"#/definitions/{name}", "definitions": _definitions()}, format_checker=FORMATS)
    error = best_match(check.iter_errors(payload))
    if error is None:
        return None
    where = "$" + "".join(f"[{p!r}]" for p in error.absolute_path)
    return f"{name} at {where}: {error.message[:300]}"


# ---------------------------------------------------------------------------------- the receiver
@dataclass
class Delivery:
    """One request as the receiver got it."""

    path: str
    headers: dict[str, str]  # lower-case names
    body: bytes

    @property
    def event(self) -> str:
        return self.headers["x-github-event"]

    @property
    def guid(self) -> str:
        return self.headers["x-github-delivery"]

    @property
    def payload(self) -> dict[str, Any]:
        if self.headers["content-type"].startswith("application/x-www-form-urlencoded"):
            return json.loads(parse_qs(self.body.decode())["payload"][0])  # type: ignore[no-any-return]
        return json.loads(self.body)  # type: ignore[no-any-return]

    @property
    def action(self) -> str | None:
        return self.payload.get("action")

    def signed_with(self, secret: str) -> bool:
        """Both signatures match the exact body bytes (compared in constant time)."""
        sha256 = "sha256=" + hmac.new(secret.encode(), self.body, hashlib.sha256).hexdigest()
        sha1 = "sha1=" + hmac.new(secret.encode(), self.body, hashlib.sha1).hexdigest()
        return (hmac.compare_digest(sha256, self.headers.get("x-hub-signature-256", ""))
                and hmac.compare_digest(sha1, self.headers.get("x-hub-signature", "")))


@dataclass
class Receiver:
    """A webhook receiver on a free loopback port: `/ok` answers 200, `/fail` 500, `/slow`
    only once `release` is set (the test sets it, or close() does); `answered` lists the paths
    it has answered, in order, each noted just before its answer is sent."""

    deliveries: list[Delivery] = field(default_factory=list)
    answered: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    release: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with receiver.lock:
                    receiver.deliveries.append(
                        Delivery(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                if self.path == "/slow":
                    receiver.release.wait(HOLD_LIMIT)
                status = 500 if self.path == "/fail" else 200
                text = b"boom" if status == 500 else b"thanks"
                with receiver.lock:  # before the answer: once localhub has it, the test may look
                    receiver.answered.append(self.path)
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "text/plain")
                    self.send_header("Content-Length", str(len(text)))
                    self.end_headers()
                    self.wfile.write(text)
                except OSError:  # the sender gave up (timeout test)
                    pass

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def url(self, path: str = "/ok") -> str:
        return f"http://127.0.0.1:{self.server.server_port}{path}"

    def got(self, event: str | None = None, action: str | None = None, path: str | None = None) -> list[Delivery]:
        with self.lock:
            found = list(self.deliveries)
        return [d for d in found if (event is None or d.event == event) and (action is None or d.action == action)
                and (path is None or d.path == path)]

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    """The receiver; at the end of the test every payload it got must match both schemas."""
    hook_receiver = Receiver()
    yield hook_receiver
    hook_receiver.close()
    problems = sorted({p for d in hook_receiver.got()
                       for p in (schema_problem(d.event, d.payload), webhook_problem(d.event, d.payload, d.headers))
                       if p})
    if problems:
        pytest.fail("webhook payloads differ from GitHub's schemas:\n" + "\n".join(f"  - {p}" for p in problems),
                    pytrace=False)


def settle(server: LocalhubServer) -> list[dict[str, Any]]:
    """Wait until localhub has handled every queued delivery; all deliveries, oldest first."""
    resp = requests.get(f"{server.url}/_localhub/deliveries", params={"wait": 1},
                        headers=operator_headers(server), timeout=15)
    assert resp.headers["X-Localhub-Idle"] == "true"
    return resp.json()  # type: ignore[no-any-return]


def delivery_mode(server: LocalhubServer, **settings: object) -> None:
    requests.post(f"{server.url}/_localhub/delivery", json=settings, headers=operator_headers(server),
                  timeout=10).raise_for_status()


@dataclass
class Hooked:
    """alice's `alice/memory` with a webhook (all events, JSON, SECRET) to the receiver;
    bob, a collaborator who may push, has a clone to push from."""

    server: LocalhubServer
    receiver: Receiver
    repo: Any
    hook: Any
    alice_token: str
    bob_token: str
    checkout: Checkout

    def api(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        return requests.request(method, f"{self.server.api_url}/repos/alice/memory{path}",
                                headers={"Authorization": f"token {self.alice_token}"}, timeout=10, **kwargs)


@pytest.fixture
def hooked(localhub: LocalhubServer, receiver: Receiver, tmp_path: Path) -> Hooked:
    alice_token = localhub_token(localhub, "alice")
    bob_token = localhub_token(localhub, "bob")
    repo = client(localhub, alice_token).get_user().create_repo("memory", auto_init=True)
    repo.add_to_collaborators("bob", "push")
    hook = repo.create_hook("web", {"url": receiver.url(), "content_type": "json", "secret": SECRET}, ["*"])
    checkout = Checkout.clone(localhub, bob_token, "alice/memory", tmp_path / "bob")
    settle(localhub)
    return Hooked(localhub, receiver, repo, hook, alice_token, bob_token, checkout)


# ---------------------------------------------------------------------------------- hooks and pings
def test_a_new_hook_is_pinged_and_headers_are_githubs(hooked: Hooked) -> None:
    [ping] = hooked.receiver.got("ping")
    assert ping.signed_with(SECRET)
    assert ping.headers["content-type"] == "application/json"
    assert ping.headers["user-agent"] == "GitHub-Hookshot/localhub"
    assert ping.headers["x-github-hook-id"] == str(hooked.hook.id)
    assert ping.headers["x-github-hook-installation-target-type"] == "repository"
    assert ping.headers["x-github-hook-installation-target-id"] == str(hooked.repo.id)
    payload = ping.payload
    assert (payload["hook_id"], payload["hook"]["config"]["secret"]) == (hooked.hook.id, "********")
    assert payload["repository"]["full_name"] == "alice/memory"
    hooked.hook.ping()
    settle(hooked.server)
    pings = hooked.receiver.got("ping")
    assert len(pings) == 2 and pings[0].guid != pings[1].guid


def test_hooks_are_listed_edited_and_deleted_as_on_github(hooked: Hooked) -> None:
    repo = hooked.repo
    assert [h.id for h in repo.get_hooks()] == [hooked.hook.id]
    shown = repo.get_hook(hooked.hook.id)
    assert (shown.config["secret"], shown.events, shown.active) == ("********", ["*"], True)
    assert shown.last_response.status == "active"
    with pytest.raises(github.GithubException) as twice:
        repo.create_hook("web", {"url": hooked.receiver.url(), "content_type": "json"}, ["push"])
    assert twice.value.data["errors"][0]["message"] == "Hook already exists on this repository"
    with pytest.raises(github.GithubException) as no_url:
        repo.create_hook("web", {"content_type": "json"}, ["push"])
    assert no_url.value.data["errors"][0]["message"] == "Config must contain URL for webhooks"
    # A config without the secret removes it, as GitHub documents: later deliveries are unsigned.
    shown.edit("web", {"url": hooked.receiver.url(), "content_type": "json"}, events=["push"],
               add_events=["issue_comment"])
    assert (shown.events, "secret" in shown.config) == (["push", "issue_comment"], False)
    shown.ping()
    shown.test()  # GitHub's "test push": the default branch's latest push again
    settle(hooked.server)
    assert "x-hub-signature-256" not in hooked.receiver.got("ping")[-1].headers
    assert hooked.receiver.got("push")[-1].payload["ref"] == "refs/heads/main"
    shown.delete()
    with pytest.raises(github.UnknownObjectException):
        repo.get_hook(hooked.hook.id)


def test_form_hooks_get_the_json_in_a_payload_field(hooked: Hooked) -> None:
    hooked.repo.create_hook("web", {"url": hooked.receiver.url("/form"), "content_type": "form", "secret": SECRET},
                            ["push"])
    settle(hooked.server)
    [ping] = hooked.receiver.got("ping", path="/form")
    assert ping.headers["content-type"] == "application/x-www-form-urlencoded"
    assert ping.body.startswith(b"payload=")
    assert ping.signed_with(SECRET)  # over the form body as sent
    assert ping.payload["hook"]["config"]["content_type"] == "form"


def test_hooks_get_only_the_events_they_asked_for(hooked: Hooked) -> None:
    pushes = hooked.repo.create_hook("web", {"url": hooked.receiver.url("/pushes"), "content_type": "json"}, ["push"])
    hooked.repo.create_hook("web", {"url": hooked.receiver.url("/off"), "content_type": "json"}, ["*"], active=False)
    number = _pull(hooked)
    hooked.repo.get_issue(number).create_comment("hello")
    settle(hooked.server)
    assert {d.event for d in hooked.receiver.got(path="/pushes")} == {"ping", "push"}
    assert hooked.receiver.got(path="/off") == []
    assert {d.event for d in hooked.receiver.got(path="/ok")} >= {"ping", "push", "pull_request", "issue_comment"}
    assert pushes.id != hooked.hook.id


# ---------------------------------------------------------------------------------- events
def _pull(hooked: Hooked, branch: str = "feature") -> int:
    hooked.checkout.commit(branch, {"notes/ada.md": "# Ada\n"}, "Add Ada's notes")
    hooked.checkout.push(branch)
    return open_pull(hooked.server, hooked.bob_token, "alice/memory", branch)


def test_a_pushed_commit_is_distinct_unless_another_branch_already_has_it(hooked: Hooked) -> None:
    checkout = hooked.checkout
    shared = checkout.commit("shared", {"x.md": "x\n"}, "First on a branch of its own")
    checkout.push("shared")
    new = checkout.commit("shared", {"y.md": "y\n"}, "Then only on main")
    run_git(checkout.path, "push", "-q", "origin", "shared:main")  # main gets both; `shared` keeps the first
    settle(hooked.server)
    [to_main] = [d.payload for d in hooked.receiver.got("push") if d.payload["ref"] == "refs/heads/main"
                 and d.payload["after"] == new]
    assert [(c["id"], c["distinct"]) for c in to_main["commits"]] == [(shared, False), (new, True)]
    [created] = [d.payload for d in hooked.receiver.got("push") if d.payload["ref"] == "refs/heads/shared"]
    assert [(c["id"], c["distinct"]) for c in created["commits"]] == [(shared, True)]


def test_push_payloads_describe_created_updated_forced_and_deleted_refs(hooked: Hooked) -> None:
    checkout = hooked.checkout
    first = checkout.commit("topic", {"a.md": "a\n", "README.md": "changed\n"}, "Add a, change README")
    checkout.push("topic")
    second = checkout.commit("topic", {"a.md": None, "b.md": "b\n"}, "Replace a with b")
    checkout.push("topic")
    rewritten = checkout.commit("rewrite", {"c.md": "c\n"}, "Start over")  # from `topic`'s head
    checkout.push("rewrite")
    checkout.delete_remote("rewrite")
    settle(hooked.server)
    pushes = {(d.payload["ref"], d.payload["after"]): d.payload for d in hooked.receiver.got("push")}
    created = pushes[("refs/heads/topic", first)]
    assert (created["before"], created["created"], created["deleted"], created["forced"]) == (ZERO, True, False, False)
    assert [c["id"] for c in created["commits"]] == [first]
    assert (created["commits"][0]["added"], created["commits"][0]["modified"]) == (["a.md"], ["README.md"])
    assert created["head_commit"]["message"] == "Add a, change README"
    assert created["pusher"]["name"] == "bob" and created["sender"]["login"] == "bob"
    assert isinstance(created["repository"]["created_at"], int)  # push payloads use epoch seconds
    assert isinstance(created["repository"]["pushed_at"], int)
    updated = pushes[("refs/heads/topic", second)]
    assert (updated["before"], updated["created"]) == (first, False)
    assert (updated["commits"][0]["removed"], updated["commits"][0]["added"]) == (["a.md"], ["b.md"])
    assert updated["compare"].endswith(f"/compare/{first[:12]}...{second[:12]}")
    deleted = pushes[("refs/heads/rewrite", ZERO)]
    assert (deleted["before"], deleted["deleted"], deleted["head_commit"], deleted["commits"]) == (
        rewritten, True, None, [])
    # A force push that drops a commit is `forced`.
    checkout.commit("topic", {"d.md": "d\n"}, "Extra")
    checkout.push("topic")
    run_git(checkout.path, "reset", "-q", "--hard", first)
    checkout.push("topic", force=True)
    settle(hooked.server)
    forced = [d.payload for d in hooked.receiver.got("push")
              if d.payload["after"] == first and not d.payload["created"]]
    assert forced and forced[0]["forced"] is True


def test_pull_request_comment_label_review_and_status_events(hooked: Hooked) -> None:
    number = _pull(hooked)
    bob_repo = client(hooked.server, hooked.bob_token).get_repo("alice/memory")
    comment = bob_repo.get_issue(number).create_comment("Ready for review.")
    issue = hooked.repo.get_issue(number)
    issue.add_to_labels("needs review")
    issue.remove_from_labels("needs review")
    review = hooked.repo.get_pull(number).create_review(event="APPROVE")
    head = str(hooked.server.hub.git(hooked.server.hub.repo("alice", "memory")).references["refs/heads/feature"].target)
    status = commit_of(hooked.repo, head).create_status("success", "https://ci.example/7", "tests pass", "ci")
    deliveries = settle(hooked.server)
    got = hooked.receiver.got
    [opened] = got("pull_request", "opened")
    assert (opened.payload["number"], opened.payload["pull_request"]["head"]["sha"]) == (number, head)
    assert opened.payload["pull_request"]["user"]["login"] == "bob"
    [commented] = got("issue_comment", "created")
    assert commented.payload["comment"]["id"] == comment.id
    assert commented.payload["issue"]["pull_request"]["url"].endswith(f"/pulls/{number}")
    [labeled] = got("pull_request", "labeled")
    assert labeled.payload["label"]["name"] == "needs review"
    assert [x["name"] for x in labeled.payload["pull_request"]["labels"]] == ["needs review"]
    [unlabeled] = got("pull_request", "unlabeled")
    assert unlabeled.payload["pull_request"]["labels"] == []
    [submitted] = got("pull_request_review", "submitted")
    assert (submitted.payload["review"]["id"], submitted.payload["review"]["state"]) == (review.id, "approved")
    [sent_status] = got("status")
    assert (sent_status.payload["id"], sent_status.payload["state"], sent_status.payload["sha"]) == (
        status.id, "success", head)
    assert [b["name"] for b in sent_status.payload["branches"]] == ["feature"]
    assert all(d.signed_with(SECRET) for d in got())
    assert len({d.guid for d in got()}) == len(got())  # one GUID per event per hook
    assert {d["status"] for d in deliveries} == {"OK"}


def test_pull_request_lifecycle_events(hooked: Hooked) -> None:
    number = _pull(hooked)
    hub = hooked.server.hub
    before = str(hub.git(hub.repo("alice", "memory")).references["refs/heads/feature"].target)
    after = hooked.checkout.commit("feature", {"notes/ada.md": "# Ada\n\nMore.\n"}, "More notes")
    hooked.checkout.push("feature")
    pull = hooked.repo.get_pull(number)
    pull.edit(title="Add Ada's notes")
    pull.edit(state="closed")
    pull.edit(state="open")
    assert hooked.repo.get_pull(number).merge().merged
    settle(hooked.server)
    got = hooked.receiver.got
    [sync] = got("pull_request", "synchronize")
    assert (sync.payload["before"], sync.payload["after"]) == (before, after)
    assert sync.payload["pull_request"]["commits"] == 2
    [edited] = got("pull_request", "edited")
    assert edited.payload["changes"] == {"title": {"from": "Add notes"}}
    closed, merged = got("pull_request", "closed")
    assert (closed.payload["pull_request"]["state"], closed.payload["pull_request"]["merged"]) == ("closed", False)
    assert (merged.payload["pull_request"]["merged"], merged.payload["pull_request"]["merged_by"]["login"]) == (
        True, "alice")
    [reopened] = got("pull_request", "reopened")
    assert reopened.payload["pull_request"]["state"] == "open"
    assert got("push")[-1].payload["ref"] == "refs/heads/main"  # the merge moved main


@pytest.mark.parametrize("pusher", ["bob", "app-alice[bot]"])
def test_pull_requests_merged_by_one_push_of_main_are_reported_as_github_reports_them(
        hooked: Hooked, pusher: str) -> None:
    """A batch as the integrator pushes it: on main, one merge commit per pull request with its
    head as second parent, then one push (by bob, or by an App's installation as the integrator
    in App mode; alice opened the pull requests). GitHub marks a pull request merged once its
    head reaches the base by a push (hub-merge(1)); its REST answer then has state `closed`,
    `merged`, `merged_at` = `closed_at`, `merged_by` the pusher and `merge_commit_sha` the merge
    commit that brought it ("if merged as a merge commit, the SHA of the merge commit", GET
    /pulls/{n} in GitHub's description), and exactly one `closed` delivery with `merged: true`,
    after the push's, says the same. A pull request whose head main does not hold stays open,
    with main as its new base and no delivery."""
    checkout, spec = hooked.checkout, load_spec()
    heads: dict[int, str] = {}
    for name in ("one", "two", "three", "left"):
        run_git(checkout.path, "checkout", "-q", "main")
        head = checkout.commit(name, {f"notes/{name}.md": f"# {name}\n"}, f"Add {name}")
        checkout.push(name)
        heads[open_pull(hooked.server, hooked.alice_token, "alice/memory", name, title=f"Add {name}")] = head
    *batch, left = heads
    settle(hooked.server)
    if pusher != "bob":
        token = _installation_token(hooked.server, "alice")
        run_git(checkout.path, "remote", "set-url", "origin", git_url(hooked.server, token, "alice/memory"))
    run_git(checkout.path, "checkout", "-q", "main")
    merges = {}
    for number in batch:
        run_git(checkout.path, "merge", "-q", "--no-ff", "-m", f"Merge pull request #{number}", heads[number])
        merges[number] = run_git(checkout.path, "rev-parse", "HEAD")
    seen = len(hooked.receiver.got())
    checkout.push("main")
    settle(hooked.server)

    for number in batch:
        resp = hooked.api("GET", f"/pulls/{number}")
        pull = resp.json()
        assert spec.check("GET", f"/repos/alice/memory/pulls/{number}", resp.status_code, pull) is None
        assert (pull["state"], pull["merged"], pull["merged_by"]["login"], pull["user"]["login"]) == (
            "closed", True, pusher, "alice")
        assert pull["merge_commit_sha"] == merges[number]
        assert run_git(checkout.path, "rev-parse", f"{merges[number]}^2") == heads[number] == pull["head"]["sha"]
        assert pull["merged_at"] is not None and pull["merged_at"] == pull["closed_at"]
        assert hooked.api("GET", f"/pulls/{number}/merge").status_code == 204
        for commit in (merges[number], heads[number]):  # "the merged pull request that introduced the commit"
            assert [p["number"] for p in hooked.api("GET", f"/commits/{commit}/pulls").json()] == [number]
    still = hooked.api("GET", f"/pulls/{left}").json()
    assert (still["state"], still["merged"], still["merged_by"], still["merged_at"]) == ("open", False, None, None)
    assert still["base"]["sha"] == merges[batch[-1]]
    assert hooked.api("GET", f"/pulls/{left}/merge").status_code == 404

    after = hooked.receiver.got()[seen:]
    assert [(d.event, d.action) for d in after] == [("push", None)] + [("pull_request", "closed")] * len(batch)
    assert after[0].payload["after"] == merges[batch[-1]] and after[0].payload["sender"]["login"] == pusher
    assert sorted(d.payload["number"] for d in after[1:]) == sorted(batch)  # one each, none for `left`
    for payload in (d.payload for d in after[1:]):
        number = payload["number"]
        assert (payload["sender"]["login"], payload["pull_request"]["merged"]) == (pusher, True)
        assert payload["pull_request"]["merged_by"]["login"] == pusher
        assert payload["pull_request"]["merge_commit_sha"] == merges[number]
        assert payload["pull_request"]["merged_at"] == hooked.api("GET", f"/pulls/{number}").json()["merged_at"]


def test_member_events_when_a_collaborator_is_added_edited_and_removed(hooked: Hooked) -> None:
    """The `member` deliveries, so that their payloads too meet both schemas."""
    localhub_token(hooked.server, "carol")
    hooked.repo.add_to_collaborators("carol", "push")
    hooked.repo.add_to_collaborators("carol", "admin")
    hooked.repo.remove_from_collaborators("carol")
    settle(hooked.server)
    members = [d.payload for d in hooked.receiver.got("member")]
    assert [(m["action"], m["member"]["login"], m["sender"]["login"]) for m in members] == [
        ("added", "carol", "alice"), ("edited", "carol", "alice"), ("removed", "carol", "alice")]
    assert "old_permission" in members[1]["changes"]


# ---------------------------------------------------------------------------------- deliveries
def test_deliveries_are_recorded_and_redelivered_with_the_same_guid(hooked: Hooked) -> None:
    summaries = list(hooked.repo.get_hook_deliveries(hooked.hook.id))
    assert [(s.event, s.status_code, s.status, s.redelivery) for s in summaries] == [("ping", 200, "OK", False)]
    full = hooked.repo.get_hook_delivery(hooked.hook.id, summaries[0].id)
    assert full.request.headers["X-GitHub-Event"] == "ping"
    assert full.request.payload["hook_id"] == hooked.hook.id
    assert (full.response.payload, full.guid) == ("thanks", hooked.receiver.got("ping")[0].guid)
    resp = hooked.api("POST", f"/hooks/{hooked.hook.id}/deliveries/{summaries[0].id}/attempts")
    assert resp.status_code == 202
    settle(hooked.server)
    first, again = hooked.receiver.got("ping")
    assert again.guid == first.guid and again.body == first.body and again.signed_with(SECRET)
    newest = list(hooked.repo.get_hook_deliveries(hooked.hook.id))
    assert [(s.guid, s.redelivery) for s in newest] == [(first.guid, True), (first.guid, False)]  # newest first


def test_failing_and_slow_receivers_are_recorded_with_their_outcome(hooked: Hooked) -> None:
    delivery_mode(hooked.server, mode="normal", timeout_ms=300)
    for path in ("/fail", "/slow"):
        hooked.repo.create_hook("web", {"url": hooked.receiver.url(path), "content_type": "json"}, ["push"])
    closed_port = hooked.receiver.url("/gone").replace(str(hooked.receiver.server.server_port), "9")
    hooked.repo.create_hook("web", {"url": closed_port, "content_type": "json"}, ["push"])
    outcomes = {(d["status_code"], d["status"]) for d in settle(hooked.server) if d["hook_id"] != hooked.hook.id}
    assert outcomes == {(500, "Invalid HTTP Response: 500"), (0, "timed out"), (0, "failed to connect to host")}
    hooks = {h.config["url"]: h for h in hooked.repo.get_hooks()}
    failing = hooks[hooked.receiver.url("/fail")]
    assert (failing.last_response.code, failing.last_response.status) == (500, "failed")


def test_drop_mode_records_deliveries_without_sending_them(hooked: Hooked) -> None:
    delivery_mode(hooked.server, mode="drop")
    hooked.hook.ping()
    deliveries = settle(hooked.server)
    assert len(hooked.receiver.got("ping")) == 1  # only the one from creating the hook
    assert (deliveries[-1]["status_code"], deliveries[-1]["event"]) == (0, "ping")
    assert deliveries[-1]["status"].startswith("dropped")


def test_duplicate_mode_sends_each_delivery_twice_with_one_guid(hooked: Hooked) -> None:
    delivery_mode(hooked.server, mode="duplicate")
    hooked.hook.ping()
    settle(hooked.server)
    first, second = hooked.receiver.got("ping")[1:]
    assert first.guid == second.guid and first.body == second.body
    assert [d["guid"] for d in settle(hooked.server)].count(first.guid) == 2


def test_reverse_mode_sends_a_held_batch_newest_first(hooked: Hooked) -> None:
    number = _pull(hooked)
    settle(hooked.server)
    delivery_mode(hooked.server, mode="reverse", delay_ms=400)
    issue = hooked.repo.get_issue(number)
    ids = [issue.create_comment(f"comment {n}").id for n in range(3)]
    settle(hooked.server)
    received = [d.payload["comment"]["id"] for d in hooked.receiver.got("issue_comment")]
    assert received == list(reversed(ids))


def test_a_delay_never_holds_up_the_request_that_caused_the_event(hooked: Hooked) -> None:
    """The delivery is delayed, and its receiver does not answer until the test has its comment
    back: a request that waited on its delivery would come back only after that answer (given at
    HOLD_LIMIT, within localhub's patience here)."""
    number = _pull(hooked)
    settle(hooked.server)
    hooked.hook.edit("web", {"url": hooked.receiver.url("/slow"), "content_type": "json", "secret": SECRET})
    delivery_mode(hooked.server, mode="normal", delay_ms=300, timeout_ms=(HOLD_LIMIT + 10) * 1000)
    comment = hooked.repo.get_issue(number).create_comment("quick")
    assert comment.body == "quick"
    assert "/slow" not in hooked.receiver.answered
    hooked.receiver.release.set()
    deliveries = settle(hooked.server)
    [delivered] = hooked.receiver.got("issue_comment")
    assert delivered.payload["comment"]["id"] == comment.id and hooked.receiver.answered[-1] == "/slow"
    assert (deliveries[-1]["event"], deliveries[-1]["status_code"]) == ("issue_comment", 200)


def test_the_schema_check_catches_a_payload_github_would_not_send(hooked: Hooked) -> None:
    """The fixtures' validation is real: an extra key, or a missing one, is reported."""
    payload = hooked.receiver.got("ping")[0].payload
    assert schema_problem("ping", payload) is None
    assert schema_problem("ping", {**payload, "surprise": True}) is not None
    assert schema_problem("ping", {k: v for k, v in payload.items() if k != "hook"}) is not None
    assert schema_problem("deployment", {"action": "created"}) is not None
    # GitHub's OpenAPI description too, through its `$ref`s (`repository-webhooks`).
    assert webhook_problem("ping", payload) is None
    no_events = {k: v for k, v in payload["hook"].items() if k != "events"}
    assert webhook_problem("ping", {**payload, "hook": no_events}) is not None
    assert webhook_problem("ping", {**payload, "repository": {"name": "memory"}}) is not None
    assert webhook_problem("deployment", {"action": "created"}) is not None
    headers = hooked.receiver.got("ping")[0].headers
    assert webhook_problem("ping", payload, headers) is None
    assert webhook_problem("ping", payload, {k: v for k, v in headers.items() if k != "x-github-hook-id"})
    unsigned = {k: v for k, v in headers.items() if not k.startswith("x-hub-signature")}
    assert webhook_problem("ping", payload, unsigned) is None  # a hook without a secret signs nothing
