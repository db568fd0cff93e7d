"""The session following `main` through the receiver's event stream, with real parts: a real
Redis, the receiver on a real werkzeug server, a bare git remote, the agent's clone and a
second clone standing in for people and the integrator. A head event moves the clone and the
next system prompt is recompiled; the stream dropping and coming back, a move made meanwhile,
the agent's own edits meanwhile; a wrong agent token and an unreachable receiver are clear
one-line states, never exceptions, and change nothing."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from bot.agent import AgentSession
from bot.errors import MemrepoError
from bot.transcript import TranscriptStore
from tests.test_notify_subscriber import (  # noqa: F401 (rclient and receiver are fixtures)
    REPO,
    TOKEN,
    Receiver,
    World,
    announce,
    rclient,
    receiver,
    wait_for,
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
        assert s.subscriber is not None and s.subscriber.connected.wait(10)
        assert wait_for(lambda: s.subscriber.syncs >= 1)
        assert s.stream_state() == f"connected to {receiver.events_url()}"
        first = s.prompt()
        assert s.prompt().cache_hit

        before, sha = world.push_from_other("Prefers green tea.")
        announce(rclient, before, sha)
        assert wait_for(lambda: s.head_moves == 1), s.subscriber.last_error
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
        assert wait_for(lambda: not s.subscriber.connected.is_set())
        assert wait_for(lambda: s.subscriber.errors >= 1)
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
        assert wait_for(lambda: world.agent.head_sha() == later, timeout=10), s.subscriber.last_error
        assert wait_for(lambda: s.subscriber.connected.is_set())
        assert "Another note during the outage." in s.system_prompt()
        assert s.stream_state().startswith("connected to")


def test_a_wrong_agent_token_is_a_clear_state_and_changes_nothing(
        world: World, store: TranscriptStore, receiver: Receiver) -> None:  # noqa: F811 (fixtures)
    head = world.agent.head_sha()
    with session(world, store, receiver.events_url(), token="wrong-token") as s:
        assert s.subscriber is not None and wait_for(lambda: s.subscriber.errors >= 1)
        state = s.stream_state()
        assert "refused the agent token (401)" in state and "MEMREPO_AGENT_TOKEN" in state
        assert "wrong-token" not in state
        status = s.command("/memory-repository status")
        assert status.ok and "refused the agent token" in status.text
        assert s.system_prompt().startswith("You are Ada.")
    assert world.agent.head_sha() == head == world.remote_main()
    assert world.agent.dirty_paths() == []


def test_an_unreachable_receiver_is_a_clear_state_and_changes_nothing(world: World, store: TranscriptStore) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    head = world.agent.head_sha()
    url = f"http://127.0.0.1:{port}/v1/repos/{REPO}/events"
    started = time.monotonic()
    with session(world, store, url) as s:
        assert time.monotonic() - started < 2  # following never blocks the session
        assert s.subscriber is not None and wait_for(lambda: s.subscriber.errors >= 1)
        assert s.stream_state().startswith(f"not connected to {url} (the event stream at {url} dropped:")
        report = s.command("/doctor")
        assert report.ok and "event stream: not connected" in report.text and "Traceback" not in report.text
    assert world.agent.head_sha() == head


def test_a_malformed_events_url_is_refused_in_one_line(world: World, store: TranscriptStore) -> None:
    with pytest.raises(MemrepoError, match=r"must look like http\(s\)://host/v1/repos/<owner>/<repo>/events"):
        session(world, store, "http://127.0.0.1:1/events")
