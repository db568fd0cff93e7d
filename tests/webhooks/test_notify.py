"""Head events (docs/architecture.md §5.6) on a real Redis server: the contract's validation, publishing,
subscribing, and the newest head kept for reconnecting subscribers."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import redis

from bot.errors import MemrepoError
from bot.notify.events import HeadEvent, channel
from bot.notify.publisher import Subscription, last_head, publish_head, subscribe
from bot.queue import connect

SHA1 = "a" * 40
SHA2 = "b" * 40
DREAM = "20260301T120000Z-0a1b2c3d"


@pytest.fixture
def client(redis_url: str) -> Iterator[redis.Redis]:
    conn = connect(redis_url)
    yield conn
    conn.close()


def event(**changes: Any) -> HeadEvent:
    fields: dict[str, Any] = {"repo": "alice/memory", "sha": SHA2, "before": SHA1, "cause": "push", "pr": None,
                              "dream_id": None, "at": "2026-03-01T12:00:00Z"}
    fields.update(changes)
    return HeadEvent(**fields)


# ---------------------------------------------------------------------------------- the contract
def test_an_event_serializes_to_exactly_the_contracts_keys() -> None:
    merged = event(cause="merge", pr=12, dream_id=DREAM)
    data = json.loads(merged.to_json())
    assert data == {"repo": "alice/memory", "sha": SHA2, "before": SHA1, "cause": "merge", "pr": 12,
                    "dream_id": DREAM, "at": "2026-03-01T12:00:00Z"}
    assert HeadEvent.from_json(merged.to_json()) == merged
    assert HeadEvent.from_dict({**data, "later_key": 1}) == merged  # a newer publisher may add keys


def test_at_defaults_to_now_in_utc() -> None:
    fresh = HeadEvent(repo="alice/memory", sha=SHA1, before=None, cause="push")
    assert fresh.at.endswith("Z") and fresh.at.startswith("20")


@pytest.mark.parametrize(("changes", "words"), [
    ({"repo": "alice"}, "'repo' must be owner/name"),
    ({"repo": "alice/memory/x"}, "'repo' must be owner/name"),
    ({"sha": "abc"}, "'sha' must be a full commit sha"),
    ({"sha": SHA1.upper()}, "'sha' must be a full commit sha"),
    ({"sha": None}, "'sha' must be a full commit sha"),
    ({"before": "0"}, "'before' must be a full commit sha"),
    ({"cause": "rebase"}, "'cause' must be merge or push"),
    ({"pr": 0}, "'pr' must be a pull request number"),
    ({"pr": True}, "'pr' must be a pull request number"),
    ({"pr": "12"}, "'pr' must be a pull request number"),
    ({"cause": "merge"}, "'pr' must not be null when 'cause' is merge"),
    ({"dream_id": "dream-1"}, "'dream_id' must be a dream id"),
    ({"at": "yesterday"}, "'at' must be an ISO 8601 time"),
    ({"at": "2026-03-01T12:00:00"}, "'at' must be an ISO 8601 time with a time zone"),
    ({"at": 1700000000}, "'at' must be an ISO 8601 time"),
])
def test_bad_events_are_refused_with_the_key_named(changes: dict[str, Any], words: str) -> None:
    with pytest.raises(MemrepoError) as refused:
        event(**changes)
    assert str(refused.value).startswith("not a valid head event: ")
    assert words in str(refused.value)


def test_bad_json_and_missing_keys_are_refused() -> None:
    with pytest.raises(MemrepoError, match="not JSON"):
        HeadEvent.from_json("{")
    with pytest.raises(MemrepoError, match="expected a JSON object, found list"):
        HeadEvent.from_json("[]")
    with pytest.raises(MemrepoError, match="missing before, at"):
        HeadEvent.from_dict({"repo": "alice/memory", "sha": SHA1, "cause": "push", "pr": None, "dream_id": None})


def test_the_channel_is_the_contracts_and_ignores_case() -> None:
    assert channel("alice/memory") == "memrepo:head:alice/memory"
    assert channel("Alice/Memory") == channel("alice/memory")


# ---------------------------------------------------------------------------------- pub/sub
def test_a_subscriber_gets_what_is_published_after_it_subscribed(client: redis.Redis) -> None:
    publish_head(client, event(sha=SHA1, before=None))  # before anyone listens: nobody gets it
    with subscribe(client, "alice/memory") as sub, subscribe(client, "alice/other") as other:
        assert publish_head(client, event()) == 1
        assert sub.get(timeout=5) == event()
        assert sub.get(timeout=0.1) is None
        assert other.get(timeout=0.1) is None


def test_raw_redis_subscribers_see_the_contracts_json(client: redis.Redis) -> None:
    pubsub = client.pubsub(ignore_subscribe_messages=True)
    pubsub.subscribe("memrepo:head:alice/memory")
    publish_head(client, event(repo="Alice/Memory", cause="merge", pr=3))
    message = None
    for _ in range(50):
        message = pubsub.get_message(timeout=0.1)
        if message:
            break
    pubsub.close()
    assert message is not None
    assert json.loads(message["data"])["pr"] == 3


def test_malformed_messages_on_the_channel_are_skipped(client: redis.Redis) -> None:
    with subscribe(client, "alice/memory") as sub:
        client.publish(channel("alice/memory"), "not json")
        client.publish(channel("alice/memory"), json.dumps({"repo": "alice/memory"}))
        publish_head(client, event())
        assert sub.get(timeout=5) == event()


def test_iterating_a_subscription_blocks_until_events_come(client: redis.Redis) -> None:
    sub = subscribe(client, "alice/memory")
    assert isinstance(sub, Subscription)
    publish_head(client, event(sha=SHA1, before=None))
    publish_head(client, event())
    stream = iter(sub)
    assert [next(stream).sha, next(stream).sha] == [SHA1, SHA2]
    sub.close()


def test_the_newest_head_is_kept_for_reconnecting_subscribers(client: redis.Redis) -> None:
    assert last_head(client, "alice/memory") is None
    publish_head(client, event(sha=SHA1, before=None))
    publish_head(client, event(cause="merge", pr=7, dream_id=DREAM))
    assert last_head(client, "ALICE/memory") == event(cause="merge", pr=7, dream_id=DREAM)
    client.set("memrepo:last-head:alice/memory", "garbage")
    assert last_head(client, "alice/memory") is None


def test_a_subscription_to_a_stopped_redis_raises_redis_errors(tmp_path: Any) -> None:
    from tests.redis_server import RedisServer

    with RedisServer() as server:
        conn = connect(server.url)
        sub = subscribe(conn, "alice/memory")
        server.stop()
        with pytest.raises(redis.RedisError):
            for _ in range(20):
                sub.get(timeout=0.05)
        sub.close()  # closing after the server went away does not raise
        conn.close()


def test_one_head_move_is_announced_once_and_a_merge_says_which_pull_request(client: redis.Redis) -> None:
    """GitHub sends a push event for the integrator's own merge: agents hear of the move once,
    and the merge event (naming the pull request) is not lost if the push came first."""
    with subscribe(client, "alice/memory") as sub:
        assert publish_head(client, event(cause="push")) == 1
        assert publish_head(client, event(cause="push")) is None  # a redelivery of the same move
        assert publish_head(client, event(cause="merge", pr=7)) == 1
        assert publish_head(client, event(cause="push")) is None
        assert publish_head(client, event(cause="merge", pr=7)) is None
        assert [(e.cause, e.pr) for e in (sub.get(timeout=5), sub.get(timeout=5))] == [("push", None), ("merge", 7)]
        assert sub.get(timeout=0.2) is None
        assert publish_head(client, event(sha=SHA1, before=SHA2)) == 1  # a new move is announced
        assert sub.get(timeout=5).sha == SHA1
    assert last_head(client, "alice/memory").sha == SHA1
