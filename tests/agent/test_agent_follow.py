"""The session following `main` through the receiver's event stream, with real parts: a real
Redis, the receiver on a real werkzeug server, a bare git remote, the agent's clone and a
second clone standing in for people and the integrator. A head event moves the clone and the
next system prompt is recompiled; the stream dropping and coming back, a move made meanwhile,
the agent's own edits meanwhile; a wrong agent token and an unreachable receiver are clear
one-line states, never exceptions, and change nothing."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from bot.agent import AgentSession
from bot.errors import MemrepoError
from bot.transcript import TranscriptStore
from tests.waiting import wait_until
from tests.webhooks.test_notify_follower import (  # noqa: F401 (receiver is a fixture)
    REPO,
    TOKEN,
    WAIT,
    Receiver,
    World,
    announce,
    caught_up,
    last_error,
    receiver,
)

FOLLOW = {"backoff_base": 0.05, "backoff_cap": 0.5, "read_timeout": 5.0}


@pytest.fixture
def world(tmp_path: Path) -> World:
    return World(tmp_path)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[TranscriptStore]:
    with TranscriptStore(tmp_path / "home", fsync=False) as opened:
        yield opened


def session(world: World, store: TranscriptStore, url: str, token: str = TOKEN, **kw: Any) -> AgentSession:
    return AgentSession(world.agent.root, "c1", store=store, env={}, system_prompt="You are Ada.", events_url=url,
                        agent_token=token, subscriber_options=FOLLOW, background_dreams=False, **kw)


def test_a_head_event_moves_memory_and_the_next_prompt_is_recompiled(
        world: World, store: TranscriptStore, receiver: Receiver, rclient: redis.Redis) -> None:  # noqa: F811 (fixtures)
    with session(world, store, receiver.events_url()) as s:
        assert s.subscriber is not None
        caught_up(s.subscriber)
        assert s.stream_state() == f"connected to {receiver.events_url()}"
        first = s.prompt()
        assert s.prompt().cache_hit

        before, sha = world.push_from_other("Prefers green tea.")
        announce(rclient, before, sha)
        wait_until(lambda: s.head_moves == 1, WAIT, last_error(s.subscriber))
        assert world.agent.head_sha() == sha
        after = s.prompt()
        assert not after.cache_hit and after.head_sha == sha != first.head_sha
        assert "Prefers green tea." in after.text and "Prefers green tea." not in first.text
        assert "event stream: connected to" in s.command("/doctor").text
    assert not s.subscriber.running


def test_the_session_keeps_working_while_the_stream_is_down_and_catches_up_on_reconnect(
        world: World, store: TranscriptStore, receiver: Receiver, rclient: redis.Redis) -> None:  # noqa: F811 (fixtures)
    with session(world, store, receiver.events_url()) as s:
        assert s.subscriber is not None and s.subscriber.connected.wait(10)
        receiver.stop()
        wait_until(lambda: not s.subscriber.connected.is_set(), WAIT, "the dropped stream")
        wait_until(lambda: s.subscriber.errors >= 1, WAIT, "a refused reconnect")
        state = s.stream_state()
        assert state.startswith(f"not connected to {receiver.events_url()}") and "reconnecting with backoff" in state

        # a person's push nobody announces, then the agent's own edit: pushed on top of it
        _, theirs = world.push_from_other("Their note during the outage.")
        s.record("user", "Remember that I cycle to work.")
        result = s.handle_tool_call({"command": "create", "path": "system/commute.md", "description": "Commute.",
                                     "file_text": "Cycles to work.\n", "reason": "Commute"})
        assert result.ok and result.route == "direct" and result.pushed, result.message
        assert world.remote_main() == world.agent.head_sha() != theirs
        text = s.system_prompt()
        assert "Cycles to work." in text and "Their note during the outage." in text

        # another move while down, caught by the sync on reconnect (no event needed)
        _, later = world.push_from_other("Another note during the outage.")
        receiver.start()
        wait_until(lambda: world.agent.head_sha() == later, WAIT, last_error(s.subscriber))
        assert s.subscriber.connected.wait(WAIT)
        assert "Another note during the outage." in s.system_prompt()
        assert s.stream_state().startswith("connected to")


def test_a_wrong_agent_token_is_a_clear_state_and_changes_nothing(
        world: World, store: TranscriptStore, receiver: Receiver) -> None:  # noqa: F811 (fixtures)
    head = world.agent.head_sha()
    with session(world, store, receiver.events_url(), token="wrong-token") as s:
        assert s.subscriber is not None
        wait_until(lambda: s.subscriber.errors >= 1, WAIT, "the refusal")
        state = s.stream_state()
        assert "refused this agent's token (401)" in state and "the forge token of the memory's clone" in state
        assert "MEMREPO_AGENT_TOKEN" not in state and "wrong-token" not in state
        status = s.command("/memory-repository status")
        assert status.ok and "refused this agent's token" in status.text
        assert s.system_prompt().startswith("You are Ada.")
    assert world.agent.head_sha() == head == world.remote_main()
    assert world.agent.dirty_paths() == []


def test_an_unreachable_receiver_is_a_clear_state_and_changes_nothing(world: World, store: TranscriptStore) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    head = world.agent.head_sha()
    url = f"http://127.0.0.1:{port}/v1/repos/{REPO}/events"
    with session(world, store, url) as s:
        assert s.subscriber is not None
        wait_until(lambda: s.subscriber.errors >= 1, WAIT, "a failed connection")
        assert s.stream_state().startswith(f"not connected to {url} (the event stream at {url} dropped:")
        report = s.command("/doctor")
        assert report.ok and "event stream: not connected" in report.text and "Traceback" not in report.text
    assert world.agent.head_sha() == head


def test_a_malformed_events_url_is_refused_in_one_line(world: World, store: TranscriptStore) -> None:
    with pytest.raises(MemrepoError, match=r"must look like http\(s\)://host/v1/repos/<owner>/<repo>/events"):
        session(world, store, "http://127.0.0.1:1/events")


def test_following_never_holds_up_the_session(world: World, store: TranscriptStore) -> None:
    """A receiver that takes the connection and does not answer until the test lets it (the
    subscriber would give up after 60 s): the session is back, and answers, while the
    subscriber's first attempt is still open."""
    listener = socket.create_server(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{listener.getsockname()[1]}/v1/repos/{REPO}/events"
    accepted, release = threading.Event(), threading.Event()

    def hold() -> None:
        conn, _ = listener.accept()
        accepted.set()
        release.wait(WAIT)
        conn.close()
        listener.close()

    holder = threading.Thread(target=hold, daemon=True)
    holder.start()
    try:
        with AgentSession(world.agent.root, "c1", store=store, env={}, system_prompt="You are Ada.", events_url=url,
                          agent_token=TOKEN, subscriber_options={**FOLLOW, "read_timeout": 60.0},
                          background_dreams=False) as s:
            assert s.subscriber is not None and accepted.wait(WAIT)
            assert s.subscriber.errors == 0 and not s.subscriber.connected.is_set()  # still waiting for an answer
            assert s.command("/doctor").ok
            assert s.system_prompt().startswith("You are Ada.")
            release.set()
            wait_until(lambda: s.subscriber.errors >= 1, WAIT, "the dropped first attempt")
            assert s.stream_state().startswith(f"not connected to {url}")
    finally:
        release.set()
        holder.join(WAIT)
