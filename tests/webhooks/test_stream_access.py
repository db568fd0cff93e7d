"""Who may follow which memory: the forge decides (bot/access.py), with localhub as the forge.

localhub answers `GET /repos/{owner}/{repo}` by its users' access as GitHub does (a private
repository is a 404 to whoever cannot read it); the receiver's event stream asks it with the
agent's own token, caches the answer (refusals too, a bounded number, for at most the TTL),
ends an open stream whose access was revoked once the cached answer expired, and treats a
repository its integrator cannot read as not served. The clock is injected, so revocation is
shown without waiting five minutes."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import redis
import requests

from bot.access import ALLOWED, BAD_TOKEN, REFUSED, UNAVAILABLE, ForgeAccess, VerdictCache, verdict_of_status
from bot.notify.events import HeadEvent
from bot.notify.publisher import publish_head
from bot.serve.receiver import ReceiverServer
from bot.settings import Settings
from tests.conftest import localhub_token
from tests.waiting import wait_until
from tests.webhooks.test_event_stream import Stream
from webhooks.asgi import Receiver

WAIT = 10.0
OPERATOR = "operator-token-0123456789"
SHA = "a" * 40


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


# ---------------------------------------------------------------------------------- the pure parts
@pytest.mark.parametrize(("status", "verdict"), [
    (200, ALLOWED), (401, BAD_TOKEN), (403, REFUSED), (404, REFUSED), (500, UNAVAILABLE), (502, UNAVAILABLE),
    (429, UNAVAILABLE), (301, UNAVAILABLE)])
def test_the_forges_answer_decides(status: int, verdict: str) -> None:
    assert verdict_of_status(status) == verdict


def test_the_cache_expires_keeps_refusals_forgets_outages_and_is_bounded() -> None:
    clock = Clock()
    cache = VerdictCache(ttl=300, max_entries=3, clock=clock)
    cache.put(("t1", "a/b"), ALLOWED)
    cache.put(("t2", "a/b"), REFUSED)
    cache.put(("t3", "a/b"), UNAVAILABLE)  # not an answer: not kept
    assert (cache.get(("t1", "a/b")), cache.get(("t2", "a/b")), cache.get(("t3", "a/b"))) == (ALLOWED, REFUSED, None)
    clock.now += 299.9
    assert cache.get(("t2", "a/b")) == REFUSED
    clock.now += 0.1
    assert cache.get(("t1", "a/b")) is None and cache.get(("t2", "a/b")) is None
    for n in range(10):
        cache.put((f"k{n}", "a/b"), ALLOWED)
    assert len(cache) == 3 and cache.get(("k0", "a/b")) is None and cache.get(("k9", "a/b")) == ALLOWED


@pytest.mark.parametrize("ttl", [0, -1, 301, 3600])
def test_the_cache_never_keeps_an_answer_over_five_minutes(ttl: float) -> None:
    with pytest.raises(ValueError, match="ttl"):
        VerdictCache(ttl=ttl)


# ---------------------------------------------------------------------------------- localhub's access
class Forge:
    """localhub with alice's private memory, readable by carol (a collaborator), not by bob;
    mallory's private memory, which the integrator (memrepo-bot) cannot read; and a public one."""

    def __init__(self, server: Any) -> None:
        self.server = server
        self.tokens = {login: localhub_token(server, login) for login in ("alice", "bob", "carol", "mallory",
                                                                          "memrepo-bot")}
        self.create("alice", "memory", private=True)
        self.create("mallory", "memory", private=True)
        self.create("alice", "public", private=False)
        self.collaborator("alice", "alice/memory", "carol", add=True)
        self.collaborator("alice", "alice/memory", "memrepo-bot", add=True, permission="admin")

    def api(self, method: str, path: str, login: str, **kw: Any) -> requests.Response:
        return requests.request(method, f"{self.server.api_url}{path}", timeout=10,
                                headers={"Authorization": f"token {self.tokens[login]}"}, **kw)

    def create(self, login: str, name: str, private: bool) -> None:
        assert self.api("POST", "/user/repos", login, json={"name": name, "private": private}).status_code == 201

    def collaborator(self, by: str, repo: str, login: str, *, add: bool, permission: str = "push") -> int:
        if add:
            path = f"/repos/{repo}/collaborators/{login}"
            return self.api("PUT", path, by, json={"permission": permission}).status_code
        return self.api("DELETE", f"/repos/{repo}/collaborators/{login}", by).status_code


@pytest.fixture
def forge(localhub: Any) -> Forge:
    return Forge(localhub)


def test_localhub_shows_a_private_repository_only_to_who_may_read_it(forge: Forge) -> None:
    assert forge.api("GET", "/repos/alice/memory", "alice").status_code == 200
    assert forge.api("GET", "/repos/alice/memory", "carol").status_code == 200
    assert forge.api("GET", "/repos/alice/memory", "bob").status_code == 404  # GitHub's answer: not 403
    assert forge.api("GET", "/repos/alice/memory/pulls", "bob").status_code == 404
    assert forge.api("GET", "/repos/alice/public", "bob").status_code == 200
    assert forge.api("GET", "/repos/alice/memory/collaborators/carol", "alice").status_code == 204
    assert forge.api("GET", "/repos/alice/memory/collaborators/bob", "alice").status_code == 404
    assert forge.collaborator("carol", "alice/memory", "bob", add=True) == 403  # carol is no admin
    assert forge.collaborator("bob", "alice/memory", "bob", add=True) == 404  # bob cannot even see it
    assert forge.collaborator("alice", "alice/memory", "carol", add=False) == 204
    assert forge.api("GET", "/repos/alice/memory", "carol").status_code == 404


def test_the_access_check_asks_the_forge_with_the_agents_token(forge: Forge) -> None:
    access = ForgeAccess(forge.server.api_url, integrator_token=forge.tokens["memrepo-bot"])
    tokens = forge.tokens
    assert access.check(tokens["carol"], "alice/memory") == ALLOWED
    assert access.check(tokens["bob"], "alice/memory") == REFUSED
    assert access.check("not-a-token", "alice/memory") == BAD_TOKEN
    assert access.check(tokens["alice"], "alice/nothing") == REFUSED  # not there
    assert access.check(tokens["mallory"], "mallory/memory") == REFUSED  # the integrator cannot read it: not served
    asked = access.asked
    assert access.check(tokens["bob"], "alice/memory") == REFUSED  # a refusal is cached too
    assert access.asked == asked


# ---------------------------------------------------------------------------------- the receiver
@pytest.fixture
def served(forge: Forge, redis_url: str) -> Iterator[tuple[ReceiverServer, Clock, ForgeAccess]]:
    clock = Clock()
    access = ForgeAccess(forge.server.api_url, integrator_token=forge.tokens["memrepo-bot"], ttl=300, clock=clock)
    settings = Settings(redis_url=redis_url, webhook_secret="s", agent_token=OPERATOR, heartbeat_seconds=0.1)
    server = ReceiverServer(Receiver(settings, access=access), "127.0.0.1", 0).start()
    yield server, clock, access
    server.stop()
    access.close()


def status(server: ReceiverServer, repo: str, token: str) -> tuple[int, str]:
    resp = requests.get(f"{server.url}/v1/repos/{repo}/events", headers={"Authorization": f"Bearer {token}"},
                        timeout=10, stream=True)
    code = resp.status_code
    text = "" if code == 200 else resp.json()["message"]
    resp.close()
    return code, text


def test_a_token_without_access_is_refused_and_one_with_access_follows(
        forge: Forge, served: tuple[ReceiverServer, Clock, ForgeAccess], rclient: redis.Redis) -> None:
    server, _, _ = served
    tokens = forge.tokens
    assert status(server, "alice/memory", tokens["bob"])[0] == 404
    code, text = status(server, "alice/memory", "made-up")
    assert code == 401 and "forge does not accept this token" in text
    assert status(server, "alice/nothing", tokens["alice"])[0] == 404  # was 200 and ": connected" before
    assert status(server, "mallory/memory", tokens["mallory"])[0] == 404  # the integrator does not serve it
    assert status(server, "alice/memory", OPERATOR)[0] == 200  # operators: any served repository
    assert status(server, "mallory/memory", OPERATOR)[0] == 404
    stream = Stream(server.url, "alice/memory", tokens["carol"]).open()
    assert stream.status == 200
    stream.blocks(1)
    publish_head(rclient, HeadEvent(repo="alice/memory", sha=SHA, before=None, cause="push"))
    assert stream.events(1)[0]["id"] == SHA
    stream.close()


def test_revocation_is_honoured_within_the_cache_time(
        forge: Forge, served: tuple[ReceiverServer, Clock, ForgeAccess]) -> None:
    server, clock, _ = served
    carol = forge.tokens["carol"]
    stream = Stream(server.url, "alice/memory", carol).open()
    assert stream.status == 200
    assert forge.collaborator("alice", "alice/memory", "carol", add=False) == 204
    assert stream.blocks(3)[1:] == [": keepalive", ": keepalive"]  # still within the cached answer
    assert status(server, "alice/memory", carol)[0] == 200
    clock.now += 300  # the cached answer expires
    assert stream.ended()  # at its next heartbeat the stream asked again, and ended
    stream.close()
    assert status(server, "alice/memory", carol)[0] == 404
    wait_until(lambda: server.app.open_streams() == 0, WAIT, "the revoked streams let go")


def test_a_forge_that_cannot_be_asked_is_a_503_not_a_refusal(forge: Forge, redis_url: str) -> None:
    access = ForgeAccess("http://127.0.0.1:9/api/v3", timeout=(0.5, 0.5))
    settings = Settings(redis_url=redis_url, webhook_secret="s", agent_token=OPERATOR)
    server = ReceiverServer(Receiver(settings, access=access), "127.0.0.1", 0).start()
    try:
        resp = requests.get(f"{server.url}/v1/repos/alice/memory/events", timeout=10,
                            headers={"Authorization": f"Bearer {forge.tokens['carol']}"})
        assert resp.status_code == 503 and resp.headers["Retry-After"] == "5"
        assert len(access.cache) == 0
    finally:
        server.stop()


def test_the_agent_follows_with_the_token_in_its_clones_url(
        forge: Forge, served: tuple[ReceiverServer, Clock, ForgeAccess], tmp_path: Any,
        monkeypatch: pytest.MonkeyPatch) -> None:
    from bot.memfs import sync
    from bot.memfs.create import init_repository
    from bot.notify.follower import HeadSubscriber, forge_token, token_of_url

    server, _, _ = served
    for name in ("MEMREPO_FORGE_TOKEN", "GITHUB_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    alice = forge.tokens["alice"]
    memory = init_repository(tmp_path / "memory", "a1", "Ada")
    url = forge.server.url.replace("http://", f"http://x-access-token:{alice}@") + "/alice/memory.git"
    sync.set_remote(memory, url)
    assert token_of_url("https://x-access-token:t%2Fk@example.com/a/b.git") == "t/k"
    assert token_of_url("git@example.com:a/b.git") is None
    assert forge_token(memory.root) == alice
    assert forge_token(memory.root, {"MEMREPO_FORGE_TOKEN": "from-env"}) == "from-env"
    sub = HeadSubscriber(memory.root, f"{server.url}/v1/repos/alice/memory/events", "", backoff_base=0.05)
    with sub:
        assert sub.connected.wait(WAIT), sub.last_error  # no token given: the clone's own opened the stream
