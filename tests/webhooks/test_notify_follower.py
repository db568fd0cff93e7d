"""The agent's head follower (bot/notify/follower.py: HeadSubscriber): its SSE decoder and backoff schedule
by tables, then the whole path with real parts: a real Redis, the receiver on a real uvicorn
server (bot/serve/receiver.py), a bare git remote and memory clones. A commit pushed from another clone and announced
with publish_head moves the subscriber's clone, and the compiled prompt follows; the receiver
going away and coming back, a move made meanwhile, unpushed local commits, a refused token."""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from bot import identity
from bot.errors import MemrepoError
from bot.memfs import sync
from bot.memfs.create import init_repository
from bot.memfs.prompt.compiler import PromptCompiler
from bot.memfs.store.repo import MemoryRepo
from bot.notify.events import HeadEvent
from bot.notify.follower import HeadSubscriber, SSEDecoder, SSEMessage, backoff_delay, parse_sse, repo_of_url
from bot.notify.publisher import publish_head
from bot.serve.receiver import ReceiverServer
from bot.settings import Settings
from tests.conftest import git
from tests.waiting import wait_until
from webhooks.asgi import Receiver as ReceiverApp

TOKEN = "agent-token-0123456789"
REPO = "alice/memory"
HUMAN = "system/human.md"
WAIT = 10.0  # seconds to wait for what the subscriber's thread does before failing


# ---------------------------------------------------------------------------------- SSE decoding
@pytest.mark.parametrize(("chunks", "expected"), [
    (["event: head\nid: a\ndata: {}\n\n"], [SSEMessage("head", "{}", "a")]),
    (["data: x\n\n"], [SSEMessage("message", "x", None)]),  # no event line: "message"
    (["data: one\ndata: two\n\n"], [SSEMessage("message", "one\ntwo", None)]),
    (["data:no-space\n\n"], [SSEMessage("message", "no-space", None)]),
    (["data:  two spaces\n\n"], [SSEMessage("message", " two spaces", None)]),  # only one space is stripped
    (["data\n\n"], [SSEMessage("message", "", None)]),  # a field name alone: empty value
    ([": keepalive\n\n"], []),  # comments and heartbeats are not events
    (["retry: 3000\n: connected\n\n"], []),  # the receiver's greeting: no data, no event
    (["event: head\n\n"], []),  # a block without data is not dispatched
    (["event: head\r\ndata: a\r\n\r\n"], [SSEMessage("head", "a", None)]),  # CRLF
    (["event: head\rdata: a\r\r"], [SSEMessage("head", "a", None)]),  # CR alone
    (["event: he", "ad\nda", "ta: {\"k\"", ": 1}\n", "\n"], [SSEMessage("head", '{"k": 1}', None)]),  # any split
    ([b"data: caf\xc3", b"\xa9\n\n"], [SSEMessage("message", "café", None)]),  # a character split across chunks
    (["event: head\r", "\ndata: a\r", "\n\r", "\n"], [SSEMessage("head", "a", None)]),  # CRLF split across chunks
    (["id: s1\ndata: a\n\ndata: b\n\n"], [SSEMessage("message", "a", "s1"), SSEMessage("message", "b", "s1")]),
    (["id: s1\ndata: a\n\nid\ndata: b\n\n"], [SSEMessage("message", "a", "s1"), SSEMessage("message", "b", "")]),
    (["id: a\0b\ndata: a\n\n"], [SSEMessage("message", "a", None)]),  # an id with NUL is ignored
    (["retry: 1500\ndata: a\n\n"], [SSEMessage("message", "a", None, 1500)]),
    (["retry: soon\ndata: a\n\n"], [SSEMessage("message", "a", None, None)]),
    (["unknown: field\ndata: a\n\n"], [SSEMessage("message", "a", None)]),
    (["data: unterminated"], []),  # the last block never ended
    (["event: a\ndata: 1\n\nevent: b\ndata: 2\n\n"], [SSEMessage("a", "1", None), SSEMessage("b", "2", None)]),
])
def test_sse_decoding(chunks: list[Any], expected: list[SSEMessage]) -> None:
    assert list(parse_sse(chunks)) == expected


def test_the_receivers_own_format_decodes() -> None:
    from webhooks.streams.fanout import format_event

    event = HeadEvent(repo=REPO, sha="a" * 40, before=None, cause="push")
    decoder = SSEDecoder()
    assert decoder.feed("retry: 3000\n: connected to alice/memory\n\n: keepalive\n\n") == []
    [message] = decoder.feed(format_event(event))
    assert (message.event, message.id) == ("head", "a" * 40)
    assert HeadEvent.from_json(message.data) == event


# ---------------------------------------------------------------------------------- backoff
@pytest.mark.parametrize(("attempt", "rand", "expected"), [
    (0, 0.0, 0.25), (0, 1.0, 0.5), (1, 0.0, 0.5), (1, 1.0, 1.0), (2, 0.5, 1.5),
    (5, 1.0, 16.0), (6, 0.0, 15.0), (6, 1.0, 30.0), (7, 1.0, 30.0), (100, 0.0, 15.0), (10_000, 1.0, 30.0),
])
def test_backoff_doubles_with_equal_jitter_up_to_the_cap(attempt: int, rand: float, expected: float) -> None:
    assert backoff_delay(attempt, base=0.5, cap=30.0, rand=lambda: rand) == pytest.approx(expected)


def test_backoff_is_random_within_its_band() -> None:
    delays = {backoff_delay(3) for _ in range(50)}
    assert len(delays) > 1 and all(2.0 <= d <= 4.0 for d in delays)
    with pytest.raises(ValueError):
        backoff_delay(-1)


@pytest.mark.parametrize(("url", "repo"), [
    ("http://127.0.0.1:8000/v1/repos/alice/memory/events", "alice/memory"),
    ("https://hooks.example.com/prefix/v1/repos/Alice/my.memory/events", "Alice/my.memory"),
    ("ftp://host/v1/repos/alice/memory/events", None),
    ("http://host/v1/repos/alice/events", None),
    ("http://host/v2/repos/alice/memory/events", None),
    ("http://host/v1/repos/alice/memory", None),
    ("/v1/repos/alice/memory/events", None),
])
def test_the_repository_comes_from_the_events_url(url: str, repo: str | None) -> None:
    if repo is None:
        with pytest.raises(MemrepoError, match="must look like"):
            repo_of_url(url)
    else:
        assert repo_of_url(url) == repo


# ---------------------------------------------------------------------------------- real parts
class Receiver:
    """The receiver (webhooks.asgi.Receiver on uvicorn) on a fixed loopback port, that can be
    stopped (open streams cut too, as a restart does) and started again on the same port."""

    def __init__(self, settings: Settings, **options: Any) -> None:
        self.settings = settings
        self.options = options
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.server: ReceiverServer | None = None

    def start(self) -> Receiver:
        self.server = ReceiverServer(ReceiverApp(self.settings, **self.options), "127.0.0.1", self.port).start()
        return self

    @property
    def app(self) -> ReceiverApp:
        assert self.server is not None
        return self.server.app

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()
            self.server = None

    def events_url(self, repo: str = REPO) -> str:
        return f"{self.url}/v1/repos/{repo}/events"


@pytest.fixture
def receiver(redis_url: str) -> Iterator[Receiver]:
    settings = Settings(redis_url=redis_url, webhook_secret="secret", agent_token=TOKEN,
                        repos=frozenset({REPO}), heartbeat_seconds=0.2)
    served = Receiver(settings).start()
    yield served
    served.stop()


class World:
    """A bare remote, the agent's memory clone (connected with set_remote) and a second clone
    standing in for other agents, people on GitHub, or the integrator's merges."""

    def __init__(self, tmp_path: Path) -> None:
        self.remote = tmp_path / "remote.git"
        git(tmp_path, "init", "-q", "--bare", "-b", "main", str(self.remote))
        git(self.remote, "config", "receive.denyNonFastForwards", "true")
        self.agent = init_repository(tmp_path / "agent", "a1", "Ada")
        sync.set_remote(self.agent, str(self.remote))
        git(tmp_path, "clone", "-q", str(self.remote), str(tmp_path / "other"))
        self.other = MemoryRepo.open(tmp_path / "other")

    def remote_main(self) -> str:
        return git(self.remote, "rev-parse", "refs/heads/main").strip()

    def commit(self, repo: MemoryRepo, line: str, agent_id: str = "b1") -> str:
        head = repo.head_sha()
        assert head is not None
        text = (repo.read(HUMAN, head) or b"").decode() + line + "\n"
        return repo.commit({HUMAN: text.encode()}, f"note: {line}", identity.agent(agent_id), parent=head)

    def push_from_other(self, line: str) -> tuple[str, str]:
        """Commit and push from the other clone: (before, after)."""
        before = self.remote_main()
        self.commit(self.other, line)
        result = sync.sync(self.other)  # replays onto the remote first if it moved
        assert result.pushed, result.reason
        sha = self.other.head_sha()
        assert sha is not None and self.remote_main() == sha
        return before, sha


@pytest.fixture
def world(tmp_path: Path) -> World:
    return World(tmp_path)


def last_error(sub: HeadSubscriber) -> Callable[[], str]:
    """What a failed wait reports: the subscriber's last error."""
    return lambda: f"(the subscriber's last error: {sub.last_error})"


def caught_up(sub: HeadSubscriber) -> None:
    """Wait until `sub` is connected and has made the sync it makes after connecting."""
    assert sub.connected.wait(WAIT)
    wait_until(lambda: sub.syncs >= 1, WAIT, "the catch-up sync after connecting")


def announce(client: redis.Redis, before: str, sha: str) -> None:
    publish_head(client, HeadEvent(repo=REPO, sha=sha, before=before, cause="push"))


def subscriber(world: World, receiver: Receiver, **kwargs: Any) -> HeadSubscriber:
    options: dict[str, Any] = {"backoff_base": 0.05, "backoff_cap": 0.5, "read_timeout": 5.0}
    options.update(kwargs)
    return HeadSubscriber(world.agent.root, receiver.events_url(), TOKEN, **options)


def test_a_head_event_moves_the_clone_and_the_prompt_recompiles(
        world: World, receiver: Receiver, rclient: redis.Redis) -> None:
    compiler = PromptCompiler(world.agent.root)
    first = compiler.compile("You are Ada.")
    assert compiler.compile("You are Ada.").cache_hit
    seen: list[tuple[HeadEvent | None, str | None]] = []
    with subscriber(world, receiver, on_head=lambda event, head: seen.append((event, head))) as sub:
        caught_up(sub)  # its catch-up sync finds nothing to do
        assert seen == []
        before, sha = world.push_from_other("Prefers green tea.")
        announce(rclient, before, sha)
        wait_until(lambda: world.agent.head_sha() == sha, WAIT, last_error(sub))
        wait_until(lambda: len(seen) == 1, WAIT, "on_head")
        event, head = seen[0]
        assert event is not None and event.sha == sha and head == sha
        assert sub.last_event_id == sha
        assert sub.errors == 0, sub.last_error
    assert not sub.running
    again = compiler.compile("You are Ada.")
    assert not again.cache_hit and again.head_sha == sha != first.head_sha
    assert "Prefers green tea." in again.text and "Prefers green tea." not in first.text
    assert (world.agent.root / HUMAN).read_text().endswith("Prefers green tea.\n")
    assert world.agent.dirty_paths() == []


def test_events_for_the_current_head_or_other_repositories_do_nothing(
        world: World, receiver: Receiver, rclient: redis.Redis) -> None:
    with subscriber(world, receiver) as sub:
        caught_up(sub)
        head = world.agent.head_sha()
        assert head is not None
        publish_head(rclient, HeadEvent(repo=REPO, sha=head, before=None, cause="push"))
        publish_head(rclient, HeadEvent(repo="alice/other", sha="c" * 40, before=None, cause="push"))
        before, sha = world.push_from_other("A marker.")
        announce(rclient, before, sha)  # sent last: once it arrived, the two before it were handled
        wait_until(lambda: world.agent.head_sha() == sha, WAIT, last_error(sub))
        assert sub.syncs == 2 and sub.errors == 0, sub.last_error


def test_an_event_for_a_commit_the_clone_already_has_does_not_sync(
        world: World, receiver: Receiver, rclient: redis.Redis) -> None:
    with subscriber(world, receiver) as sub:
        caught_up(sub)
        older = world.agent.head_sha()
        before, sha = world.push_from_other("A first marker.")
        announce(rclient, before, sha)
        wait_until(lambda: world.agent.head_sha() == sha, WAIT, last_error(sub))
        assert sub.syncs == 2
        assert older is not None
        publish_head(rclient, HeadEvent(repo=REPO, sha=older, before=None, cause="push"))  # late, and behind
        before, newest = world.push_from_other("A second marker.")
        announce(rclient, before, newest)
        wait_until(lambda: world.agent.head_sha() == newest, WAIT, last_error(sub))
        assert sub.syncs == 3 and sub.errors == 0, sub.last_error  # the late event started no sync


def test_the_subscriber_reconnects_and_catches_a_move_made_while_the_receiver_was_down(
        world: World, receiver: Receiver, rclient: redis.Redis) -> None:
    seen: list[tuple[HeadEvent | None, str | None]] = []
    with subscriber(world, receiver, on_head=lambda event, head: seen.append((event, head))) as sub:
        assert sub.connected.wait(10)
        before, first = world.push_from_other("Before the outage.")
        announce(rclient, before, first)
        wait_until(lambda: world.agent.head_sha() == first, WAIT, last_error(sub))

        receiver.stop()
        wait_until(lambda: not sub.connected.is_set(), WAIT, "the dropped stream")
        errors = sub.errors
        before, second = world.push_from_other("During the outage.")
        announce(rclient, before, second)  # nobody relays it: the receiver is down
        wait_until(lambda: sub.errors >= errors + 2, WAIT, "reconnects refused while the receiver is down")
        assert world.agent.head_sha() == first
        assert sub.last_error

        receiver.start()
        wait_until(lambda: world.agent.head_sha() == second, WAIT, last_error(sub))
        assert sub.connects >= 2 and sub.running
        wait_until(lambda: len(seen) == 2, WAIT, "on_head")
        assert seen[1][1] == second

        before, third = world.push_from_other("After the outage.")  # and events flow again
        announce(rclient, before, third)
        wait_until(lambda: world.agent.head_sha() == third, WAIT, last_error(sub))
    assert "During the outage." in (world.agent.root / HUMAN).read_text()


def test_unpushed_local_commits_are_replayed_onto_the_new_head_and_pushed(
        world: World, receiver: Receiver, rclient: redis.Redis) -> None:
    local = world.commit(world.agent, "Ada's own note.", agent_id="a1")  # queued: never pushed
    with subscriber(world, receiver, read_timeout=5.0) as sub:
        assert sub.connected.wait(10)
        # the catch-up sync after connecting already pushes the queued commit
        wait_until(lambda: world.remote_main() == local, WAIT, last_error(sub))
        sub_head = world.agent.head_sha()
        assert sub_head == local

        before, theirs = world.push_from_other("Their note.")
        mine = world.commit(world.agent, "Another note of Ada's.", agent_id="a1")  # not pushed yet
        announce(rclient, before, theirs)
        wait_until(lambda: world.remote_main() not in (theirs, local), WAIT, last_error(sub))
        head = world.agent.head_sha()
        assert head == world.remote_main() and head != mine  # replayed: a new commit on top of theirs
        assert git(world.agent.root, "rev-parse", f"{head}^").strip() == theirs
        text = (world.agent.root / HUMAN).read_text()
        assert "Their note." in text and "Another note of Ada's." in text and "Ada's own note." in text
        assert sub.errors == 0, sub.last_error


def test_a_wrong_token_is_reported_once_and_retried_slowly(
        world: World, receiver: Receiver, caplog: pytest.LogCaptureFixture) -> None:
    sub = HeadSubscriber(world.agent.root, receiver.events_url(), "wrong-token", backoff_base=0.01,
                         refused_delay=0.05)
    with caplog.at_level("DEBUG", logger="memrepo.notify.subscriber"):
        sub.start()
        wait_until(lambda: sub.errors >= 3, WAIT, "three failed attempts")
        sub.stop()
    assert not sub.running and not sub.connected.is_set() and sub.connects == 0
    assert "refused this agent's token (401)" in (sub.last_error or "")
    assert "wrong-token" not in (sub.last_error or "")
    errors = [r for r in caplog.records if r.levelname == "ERROR"]
    assert len(errors) == 1 and "follow with the forge token of the memory's clone" in errors[0].getMessage()
    assert "MEMREPO_AGENT_TOKEN" not in errors[0].getMessage()  # the operator's token is not the agent's


def test_a_clone_without_a_forge_token_says_where_to_put_one(
        world: World, receiver: Receiver, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("MEMREPO_FORGE_TOKEN", "GITHUB_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    sub = HeadSubscriber(world.agent.root, receiver.events_url(), "", backoff_base=0.01, refused_delay=0.05)
    assert sub.token == ""  # the test world's origin is a local path: no token in it
    with sub:
        wait_until(lambda: sub.errors >= 1, WAIT, "the refusal")
    assert "needs this agent's forge token (401) and the clone has none" in (sub.last_error or "")
    assert "MEMREPO_FORGE_TOKEN or GITHUB_TOKEN" in (sub.last_error or "")
    assert not world.agent.dirty_paths()


def test_stop_is_prompt_while_reading_and_while_waiting(world: World, receiver: Receiver) -> None:
    """stop() joins the thread for at most 5 s, far less than the 60 s read and the 600 s wait
    here: the thread has ended only if stop() woke it."""
    sub = subscriber(world, receiver, read_timeout=60.0).start()
    caught_up(sub)
    sub.stop()
    assert not sub.running

    slow = HeadSubscriber(world.agent.root, receiver.events_url(), "wrong", refused_delay=600.0).start()
    wait_until(lambda: slow.errors >= 1, WAIT, "the refusal")
    slow.stop()
    assert not slow.running


def test_an_unreachable_receiver_is_retried_not_fatal(world: World) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    sub = HeadSubscriber(world.agent.root, f"http://127.0.0.1:{port}/v1/repos/{REPO}/events", TOKEN,
                         backoff_base=0.01, backoff_cap=0.05).start()
    try:
        wait_until(lambda: sub.errors >= 3, WAIT, "three failed attempts")
        assert sub.running and "dropped" in (sub.last_error or "")
    finally:
        sub.stop()
