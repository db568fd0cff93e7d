"""`memrepo serve`'s palace: the pages of every served memory at /palace/<owner>/<repo>/, over real
HTTP on the receiver (uvicorn), localhub as the forge deciding who may look (the event stream's
access check, with an injected clock so revocation shows without waiting), real Redis for the
head events that tell the palace main moved, and real git for the receiver's clone of each
memory, fetched from localhub with the integrator's token."""

from __future__ import annotations

import re
import time
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import redis
import requests

from bot.access import ALLOWED, BAD_TOKEN, REFUSED, UNAVAILABLE, ForgeAccess
from bot.dream.runner import run_dream
from bot.forge.client import ForgeClient
from bot.forge.credentials import TokenCredentials
from bot.integrator.context import Remote
from bot.memfs import sync
from bot.memfs.create import init_repository
from bot.memfs.store.repo import MemoryRepo
from bot.memfs.tool.memory_tool import MemoryTool
from bot.notify.events import HeadEvent
from bot.notify.publisher import publish_head
from bot.palace import gate
from bot.serve.palace import ServedPalaces, should_fetch, with_credentials
from bot.serve.receiver import ReceiverServer
from bot.settings import Settings
from bot.transcript import TranscriptStore
from tests.browser import Browser, parse
from tests.conftest import FORGE_ENV, StoreClock, git
from tests.memory_forge import FAST
from tests.waiting import wait_until
from tests.webhooks.test_stream_access import OPERATOR, Clock, Forge

REPO = "alice/memory"
HUMAN = "system/human.md"


# ------------------------------------------------------------------------------ the pure parts
@pytest.mark.parametrize(("head", "newest", "fetched_for", "since", "failed", "expected"), [
    (None, None, None, None, False, True),  # nothing fetched yet
    (None, None, None, 1.0, True, False),  # ... and the last try failed a moment ago: not again yet
    (None, None, None, 6.0, True, True),  # ... five seconds later: again
    ("a", "a", "a", 1.0, False, False),  # main where the newest head event says
    ("a", "b", "a", 1.0, False, True),  # main moved: fetch at once
    ("a", "b", "b", 1.0, False, False),  # fetched for that event already (main moved again, or back)
    ("a", "b", None, 1.0, True, False),  # the fetch for it failed a moment ago
    ("a", None, None, 29.0, False, False),  # no event known: every 30 s
    ("a", None, None, 30.0, False, True),
    ("a", "a", "a", 31.0, False, True),  # and now and then even with one, in case an event was missed
])
def test_when_the_clone_is_fetched(head: str | None, newest: str | None, fetched_for: str | None, since: float,
                                   failed: bool, expected: bool) -> None:
    assert should_fetch(head, newest, fetched_for, since, failed, every=30.0, retry=5.0) is expected


@pytest.mark.parametrize(("authorization", "query", "cookie", "expected"), [
    ("Bearer t1", "t2", "t3", ("t1", gate.FROM_HEADER)),
    ("bearer  t1 ", None, None, ("t1", gate.FROM_HEADER)),
    ("Basic xyz", "t2", "t3", ("t2", gate.FROM_QUERY)),
    (None, "", "t3", ("t3", gate.FROM_COOKIE)),
    ("Bearer ", None, None, (None, gate.FROM_NOWHERE)),
])
def test_where_the_viewers_token_is_taken_from(authorization: str | None, query: str | None, cookie: str | None,
                                               expected: tuple[str | None, str]) -> None:
    assert gate.viewer_token(authorization, query, cookie) == expected


@pytest.mark.parametrize(("verdict", "status"), [(None, 401), (BAD_TOKEN, 401), (REFUSED, 404), (ALLOWED, 200),
                                                 (UNAVAILABLE, 503)])
def test_the_answer_for_each_verdict(verdict: str | None, status: int) -> None:
    assert gate.served_status(verdict) == status


def test_the_cookie_holds_the_token_sealed_and_lapses() -> None:
    key = gate.sealing_key("the webhook secret")
    sealed = gate.seal(key, "ghp_viewer")
    assert "ghp_viewer" not in sealed and gate.unseal(key, sealed) == "ghp_viewer"
    assert gate.unseal(gate.sealing_key("another secret"), sealed) is None
    assert gate.unseal(key, sealed[:-4] + "AAAA") is None and gate.unseal(key, "junk") is None
    assert gate.unseal(key, None) is None
    made = int(time.time())
    assert gate.unseal(key, sealed, now=made + gate.SEALED_HOURS * 3600 - 60) == "ghp_viewer"
    assert gate.unseal(key, sealed, now=made + gate.SEALED_HOURS * 3600 + 60) is None


# ------------------------------------------------------------------------------ when the forge fails
def test_a_forge_that_cannot_give_a_token_is_a_503_each_time_and_is_not_asked_again_at_once(
        redis_url: str, tmp_path: Path) -> None:
    """An App's installation token that cannot be had (PyGithub raises its own errors, not
    memrepo's): a 503 saying the memory could not be fetched, the same while the palace waits to
    try again, and one attempt, not one per request."""
    import github

    asked: list[str] = []

    def token() -> str:
        asked.append("token")
        raise github.GithubException(404, {"message": "Not Found"}, None)

    settings = Settings(redis_url=redis_url, webhook_secret="the webhook secret", agent_token=OPERATOR,
                        repos=frozenset({"alice/memory"}))  # named, so served before any push is seen
    palaces = ServedPalaces(settings, None, work_dir=tmp_path, remote=lambda repo: Remote("http://127.0.0.1:9/x.git",
                                                                                         token))
    try:
        client = palaces.app().test_client()
        answers = [client.get("/palace/alice/memory/", headers={"Authorization": f"Bearer {OPERATOR}"})
                   for _ in range(3)]
    finally:
        palaces.close()
    assert [a.status_code for a in answers] == [503, 503, 503]
    assert "could not be fetched from the forge" in answers[0].get_data(as_text=True)
    assert all(a.headers["Retry-After"] for a in answers)
    assert asked == ["token"]


# ------------------------------------------------------------------------------ over HTTP
@dataclass
class Served:
    forge: Forge
    server: ReceiverServer
    palaces: ServedPalaces
    clock: Clock
    memory: MemoryRepo

    def url(self, path: str = "", repo: str = REPO) -> str:
        return f"{self.server.url}/palace/{repo}/{path}"

    def get(self, path: str = "", login: str | None = None, *, repo: str = REPO, **kw: Any) -> requests.Response:
        headers = {"Authorization": f"Bearer {self.forge.tokens[login]}"} if login else {}
        return requests.get(self.url(path, repo), headers={**headers, **kw.pop("headers", {})}, timeout=30, **kw)

    def edit(self, old: str, new: str) -> str:
        result = MemoryTool(self.memory, push=False).call({"command": "str_replace", "path": HUMAN, "old_str": old,
                                                           "new_str": new, "reason": f"Note {new}"})
        assert result.ok, result.message
        git(self.memory.root, "push", "-q", "origin", "main")
        return result.commit


@pytest.fixture
def served(localhub: Any, redis_url: str, tmp_path: Path) -> Iterator[Served]:
    forge = Forge(localhub)  # alice/memory private: alice, carol and the integrator read it, bob does not
    memory = init_repository(tmp_path / "memory", "a1", "Ada")
    sync.set_remote(memory, localhub.url.replace("http://", f"http://x-access-token:{forge.tokens['alice']}@")
                    + f"/{REPO}.git")
    git(memory.root, "push", "-q", "origin", "main")
    pushed = redis.Redis.from_url(redis_url)  # the integrator's head event for that push
    publish_head(pushed, HeadEvent(repo=REPO, sha=memory.head_sha(), before=None, cause="push"))
    pushed.close()
    clock = Clock()
    access = ForgeAccess(localhub.api_url, integrator_token=forge.tokens["memrepo-bot"], ttl=300, clock=clock)
    settings = Settings(redis_url=redis_url, webhook_secret="the webhook secret", agent_token=OPERATOR)
    palaces = with_credentials(settings, access, TokenCredentials(forge.tokens["memrepo-bot"]),
                               api_url=localhub.api_url, git_url=localhub.url, work_dir=tmp_path / "work",
                               poll_ms=600_000)  # an open page follows the event stream, never this
    from webhooks.asgi import Receiver

    receiver = Receiver(settings, access=access, palace=palaces.app(), palace_token=palaces.stream_token)
    server = ReceiverServer(receiver, "127.0.0.1", 0).start()
    yield Served(forge, server, palaces, clock, memory)
    server.stop()
    palaces.close()
    access.close()


def test_a_served_memory_is_shown_to_whoever_the_forge_lets_read_it(served: Served) -> None:
    page = served.get("", "carol")
    assert page.status_code == 200, page.text
    assert "<h1>Memory of alice/memory</h1>" in page.text
    assert 'href="/palace/alice/memory/why?path=system/human.md&amp;line=' in page.text
    assert page.headers["Cache-Control"] == "no-store" and "frame-ancestors 'none'" in page.headers[
        "Content-Security-Policy"]
    for path in ("why?path=system/human.md&line=1", "file?path=system/human.md", "log", "at?date=2999-01-01",
                 "head.json", "core.txt", "assets/palace.js"):
        assert served.get(path, "carol").status_code == 200, path
    assert "Memory has no remote" not in page.text  # the receiver's clone is of the forge's memory
    assert re.search(rf"Nothing is waiting to be pushed to http://127\.0\.0\.1:\d+/{REPO}\.git", page.text), page.text
    why = served.get("why?path=system/human.md&line=1", "alice").text
    assert served.memory.head_sha()[:10] in why

    refused = served.get("", "bob")  # cannot read the private memory: as if it were not there
    assert refused.status_code == 404 and "alice/memory is not a memory this server serves" in refused.text
    assert "Memory of" not in refused.text
    nobody = served.get("")
    assert nobody.status_code == 401 and "?token=" in nobody.text
    assert nobody.headers["WWW-Authenticate"].startswith("Bearer")
    made_up = served.get("", headers={"Authorization": "Bearer made-up"})
    assert made_up.status_code == 401 and "does not accept this token" in made_up.text
    assert served.get("", "mallory", repo="mallory/memory").status_code == 404  # the integrator does not serve it
    # a repository the viewer and the integrator can read, with no push the integrator has seen: not
    # cloned, so a token cannot make the receiver fetch whatever it can read
    public = served.get("", "alice", repo="alice/public")
    assert public.status_code == 404 and "not a memory this integrator has seen a push to" in public.text
    assert not (served.palaces.root / "alice" / "public").exists()
    assert served.get("", "alice", repo="alice/nothing").status_code == 404
    assert served.get("", headers={"Authorization": f"Bearer {OPERATOR}"}).status_code == 200  # operators
    assert served.get("", headers={"Authorization": f"Bearer {OPERATOR}"}, repo="mallory/memory").status_code == 404
    assert served.palaces.fetches == 1  # only the pages of a memory someone may see fetch it, once
    assert not (served.palaces.root / "mallory").exists()


def test_a_served_dreams_line_quotes_the_users_words_from_its_pull_request(
        served: Served, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The receiver holds no transcript: the user's words come from the dream's pull request,
    which the palace reads with the integrator's credentials, and the page says so."""
    for name in FORGE_ENV:
        monkeypatch.delenv(name, raising=False)
    store = TranscriptStore(tmp_path / "agent-home", fsync=False, clock=StoreClock())
    try:
        store.append("a1", "c1", "user", "I live in Berlin.")
        dream = run_dream(served.memory, "a1", "c1", store=store, retry=FAST)
    finally:
        store.close()
    client = ForgeClient(REPO, TokenCredentials(served.forge.tokens["alice"]), base_url=served.forge.server.api_url,
                         policy=FAST, min_write_interval=0.0, timeout=10)
    pull = client.wait_for_mergeability(dream.pr, timeout=20)
    assert client.merge(dream.pr, pull.head_sha).merged
    record = "conversations/c1/2026-03.md"
    text = client.read_file(record, "main").text
    line = next(n for n, t in enumerate(text.splitlines(), 1) if "I live in Berlin." in t)

    page = parse(served.get(f"why?path={record}&line={line}", "carol").text)
    said = page.find("li", class_="step-transcript")
    assert f"Quoted from pull request #{dream.pr}'s description" in said.words()
    assert [q.words() for q in said.find_all("blockquote")] == ["I live in Berlin."]


@pytest.mark.parametrize("token", ["€uro", "a\nb", "a b", "\u00e9t\u00e9"])
def test_a_token_that_cannot_be_one_is_refused_as_a_bad_token_without_asking_the_forge(served: Served,
                                                                                     token: str) -> None:
    asked = served.palaces.access.asked if served.palaces.access is not None else 0
    answer = requests.get(served.url(), params={"token": token}, timeout=30, allow_redirects=False)
    assert answer.status_code == 401 and "does not accept this token" in answer.text
    assert served.palaces.access is not None and served.palaces.access.asked == asked


def test_a_pages_stylesheet_and_script_do_not_freshen_the_memory_again(served: Served,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    assert served.get("", "alice").status_code == 200
    asked: list[str] = []
    monkeypatch.setattr(served.palaces, "_newest", lambda repo: asked.append(repo) or (True, None))
    for asset in ("assets/palace.js", "assets/palace.css"):
        assert served.get(asset, "alice").status_code == 200, asset
    assert asked == []  # no Redis read, no fetch: the page that named them just did that
    assert served.get("log", "alice").status_code == 200 and asked == [REPO]


def test_a_browser_gives_its_token_once_and_loses_access_with_the_forges_answer(served: Served) -> None:
    carol = served.forge.tokens["carol"]
    first = requests.get(served.url("why"), params={"path": HUMAN, "line": "1", "token": carol}, timeout=30,
                         allow_redirects=False)
    assert first.status_code == 303
    where = urllib.parse.urlsplit(first.headers["Location"])  # the same page, without the token
    assert where.path == "/palace/alice/memory/why"
    assert urllib.parse.parse_qs(where.query) == {"path": [HUMAN], "line": ["1"]}
    cookie = first.headers["Set-Cookie"]
    assert cookie.startswith(f"{gate.SEALED_COOKIE}=") and carol not in cookie
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/palace/" in cookie
    browser = requests.Session()
    browser.cookies.set(gate.SEALED_COOKIE, first.cookies[gate.SEALED_COOKIE], path="/palace/")
    assert browser.get(served.url(), timeout=30).status_code == 200
    assert browser.get(served.url("log"), timeout=30).status_code == 200
    assert browser.get(served.url(repo="mallory/memory"), timeout=30).status_code == 404  # per memory, by the forge
    forged = requests.get(served.url(), cookies={gate.SEALED_COOKIE: gate.seal(gate.sealing_key("guess"), carol)},
                          timeout=30)
    assert forged.status_code == 401

    assert served.forge.collaborator("alice", REPO, "carol", add=False) == 204
    assert browser.get(served.url(), timeout=30).status_code == 200  # within the cached answer
    served.clock.now += 300  # it expires: the forge is asked again with the token the cookie holds
    gone = browser.get(served.url(), timeout=30)
    assert gone.status_code == 404 and "Memory of" not in gone.text
    assert "Set-Cookie" not in gone.headers  # the token may still read other memories
    invalid = requests.get(served.url(), cookies={gate.SEALED_COOKIE: gate.seal(served.palaces.key, "made-up")},
                           timeout=30)
    assert invalid.status_code == 401 and "does not accept this token" in invalid.text
    assert invalid.headers["Set-Cookie"].startswith(f"{gate.SEALED_COOKIE}=;")  # a token valid nowhere: dropped


def test_the_palace_follows_main_when_its_head_event_says_it_moved(served: Served, rclient: redis.Redis) -> None:
    first = served.memory.head_sha()
    assert served.get("head.json", "alice").json() == {"head": first}
    new = served.edit("Nothing recorded yet.", "The user is called Robin.")
    assert served.get("head.json", "alice").json() == {"head": first}  # no event yet: not fetched again
    assert served.palaces.fetches == 1
    publish_head(rclient, HeadEvent(repo=REPO, sha=new, before=first, cause="push"))
    assert served.get("head.json", "alice").json() == {"head": new}
    assert served.palaces.fetches == 2
    page = served.get("", "alice").text
    assert "The user is called Robin." in page and new[:10] in page
    why = served.get("why?path=system/human.md&line=" + str(_line_of(page, "Robin")), "alice").text
    assert new[:10] in why and "Note The user is called Robin." in why
    assert served.palaces.fetches == 2  # fetched once for that event


def test_a_page_follows_its_memorys_event_stream_with_the_token_its_cookie_holds(served: Served,
                                                                                 rclient: redis.Redis) -> None:
    page = served.get("", "carol").text
    assert 'data-events-url="/palace/alice/memory/events"' in page
    sealed = {gate.SEALED_COOKIE: gate.seal(served.palaces.key, served.forge.tokens["carol"])}
    with requests.get(served.url("events"), cookies=sealed, stream=True, timeout=30) as stream:
        assert stream.status_code == 200 and stream.headers["Content-Type"].startswith("text/event-stream")
        chunks = stream.iter_content(chunk_size=None)
        assert b": connected to alice/memory" in next(chunks)
        publish_head(rclient, HeadEvent(repo=REPO, sha="b" * 40, before=None, cause="push"))
        assert b"event: head" in next(chunks)
    assert requests.get(served.url("events"), timeout=30).status_code == 401
    bob = {gate.SEALED_COOKIE: gate.seal(served.palaces.key, served.forge.tokens["bob"])}
    assert requests.get(served.url("events"), cookies=bob, timeout=30).status_code == 404
    forged = {gate.SEALED_COOKIE: gate.seal(gate.sealing_key("guess"), served.forge.tokens["carol"])}
    assert requests.get(served.url("events"), cookies=forged, timeout=30).status_code == 401


def test_in_a_browser_the_page_follows_main_after_its_head_event(served: Served, rclient: redis.Redis) -> None:
    browser = Browser()
    try:
        address = served.url() + "?" + urllib.parse.urlencode({"token": served.forge.tokens["carol"]})
        page = parse(browser.open(address))
        assert page.find("h1").text() == "Memory of alice/memory"
        assert browser.evaluate("location.search") == ""  # the token left the address bar
        assert browser.evaluate("document.cookie") == ""  # and the page's scripts cannot read the cookie
        wait_until(lambda: browser.evaluate("document.body.dataset.following") == "events", 20,
                   "the page to follow its memory's event stream")
        assert served.server.app.open_streams() == 1
        browser.evaluate("window.notReloaded = true")
        new = served.edit("Nothing recorded yet.", "Prefers short answers.")
        publish_head(rclient, HeadEvent(repo=REPO, sha=new, before=None, cause="push"))
        wait_until(lambda: "Prefers short answers." in browser.dom(), 20, "the open page to show main's new commit")
        assert browser.evaluate("document.body.dataset.head") == new
        assert browser.evaluate("window.notReloaded") is True
    finally:
        browser.close()


def _line_of(page: str, text: str) -> int:
    for match in re.finditer(r'line=(\d+)"[^>]*>.*?</a>(.*?)</', page, re.S):
        if text in match.group(2):
            return int(match.group(1))
    raise AssertionError(f"no line with {text!r}")
