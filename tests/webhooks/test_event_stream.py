"""The agents' event stream (webhooks/streams/endpoint.py, webhooks/streams/fanout.py) on the receiver as it runs
(webhooks.asgi.Receiver on uvicorn), against a real Redis: the protocol HeadSubscriber reads,
heartbeats, catch-up by Last-Event-ID, the operator token, many idle streams that hold no
thread and no Redis connection while webhooks and /healthz still answer, a subscriber that
never reads, Redis going away, and a receiver restarted under open streams."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from typing import Any

import pytest
import redis
import requests

from bot.notify.events import HeadEvent, channel
from bot.notify.publisher import publish_head
from bot.serve.receiver import ReceiverServer
from bot.settings import Settings
from tests.redis_server import RedisServer
from tests.waiting import wait_until
from tests.webhooks.deliveries import REPO, SHA1, SHA2, TOKEN, make_settings, push, sign
from webhooks.asgi import Receiver

WAIT = 10.0
SHA3 = "3" * 40


class Stream:
    """One event stream over a raw socket, read block by block (or, with `read=False`, never)."""

    def __init__(self, url: str, repo: str = REPO, token: str = TOKEN, last_id: str | None = None,
                 rcvbuf: int | None = None) -> None:
        host, port = url.removeprefix("http://").split(":")
        self.sock = socket.socket()
        if rcvbuf is not None:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.sock.settimeout(WAIT)
        self.sock.connect((host, int(port)))
        extra = f"Last-Event-ID: {last_id}\r\n" if last_id else ""
        self.sock.sendall(f"GET /v1/repos/{repo}/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n"
                          f"Accept: text/event-stream\r\n{extra}\r\n".encode())
        self.buffer = b""
        self.status = 0
        self.head = ""
        self.text = ""  # decoded body not yet returned as blocks
        self.done = False

    def _more(self) -> bool:
        """Receive what has arrived; False when the connection closed."""
        data = self.sock.recv(65536)
        self.buffer += data
        if self.status:
            self._decode()
        return bool(data)

    def open(self) -> Stream:
        """Read the status line and headers (and leave the body)."""
        while b"\r\n\r\n" not in self.buffer:
            assert self._more(), "closed before the headers"
        head, _, self.buffer = self.buffer.partition(b"\r\n\r\n")
        self.head = head.decode()
        self.status = int(self.head.split(" ")[1])
        self._decode()
        return self

    def _decode(self) -> None:
        """Chunked transfer decoding of the complete chunks received (the streams are chunked)."""
        while b"\r\n" in self.buffer and not self.done:
            size_line, _, after = self.buffer.partition(b"\r\n")
            size = int(size_line, 16)
            if len(after) < size + 2:
                return
            self.text += after[:size].decode()
            self.buffer = after[size + 2:]
            self.done = size == 0  # the end of the response

    def blocks(self, count: int) -> list[str]:
        """The next `count` blocks (the text up to each blank line; fewer if the stream ended)."""
        while self.text.count("\n\n") < count and not self.done:
            if not self._more():
                self.done = True
        parts = self.text.split("\n\n", count)
        got, self.text = parts[:count], "\n\n".join(parts[count:]) if len(parts) > count else ""
        if len(parts) <= count:  # no complete block after these: keep what is pending
            got, self.text = parts[:-1], parts[-1]
        return got

    def events(self, count: int) -> list[dict[str, str]]:
        """The next `count` head events (comments skipped), reading as long as needed."""
        found: list[dict[str, str]] = []
        while len(found) < count:
            block = self.blocks(1)
            if not block:
                raise AssertionError(f"the stream ended after {found}")
            fields = dict(line.split(": ", 1) for line in block[0].split("\n") if ": " in line
                          and not line.startswith(":"))
            if fields.get("event") == "head":
                found.append(fields)
        return found

    def ended(self) -> bool:
        """Read until the server ends the response or closes the connection: True either way
        (a stream that goes on fails by the socket's timeout)."""
        try:
            while not self.done and self._more():
                pass
        except ConnectionResetError:
            pass
        return True

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def receiver(redis_url: str) -> Iterator[ReceiverServer]:
    server = ReceiverServer(Receiver(make_settings(redis_url)), "127.0.0.1", 0).start()
    yield server
    server.stop()


def deliver_push(url: str, payload: dict[str, Any], guid: str) -> requests.Response:
    body = json.dumps(payload).encode()
    return requests.post(f"{url}/webhooks/github", data=body, timeout=10, headers={
        "Content-Type": "application/json", "X-GitHub-Event": "push", "X-GitHub-Delivery": guid,
        "X-Hub-Signature-256": sign(body)})


# ---------------------------------------------------------------------------------- the protocol
def test_the_stream_relays_head_events_from_pushes_and_merges(receiver: ReceiverServer,
                                                             rclient: redis.Redis) -> None:
    stream = Stream(receiver.url).open()
    assert stream.status == 200
    assert "content-type: text/event-stream" in stream.head.lower()
    assert "cache-control: no-cache" in stream.head.lower()
    assert stream.blocks(1)[0] == f"retry: 3000\n: connected to {REPO}"
    assert deliver_push(receiver.url, push(), "push-1").status_code == 202
    [got] = stream.events(1)
    assert got["id"] == SHA2
    data = json.loads(got["data"])
    assert set(data) == {"repo", "sha", "before", "cause", "pr", "dream_id", "at"}
    assert (data["sha"], data["before"], data["cause"]) == (SHA2, SHA1, "push")
    merged = HeadEvent(repo=REPO, sha=SHA1, before=SHA2, cause="merge", pr=12, dream_id="20260301T120000Z-0a1b2c3d")
    publish_head(rclient, merged)
    assert json.loads(stream.events(1)[0]["data"]) == merged.to_dict()
    stream.close()


def test_events_are_written_into_each_connection_framed_as_the_server_frames_the_response(
        redis_url: str, rclient: redis.Redis) -> None:
    """On uvicorn every stream's connection is attached to its subscriber once the response has
    begun, and an event is written into it by the fan-out itself: as a chunk of the chunked
    response an HTTP/1.1 request gets (Stream decodes chunks: a bare event is never a complete
    chunk, and the read times out with no heartbeat due), and as it is into the unframed
    response an HTTP/1.0 request gets."""
    receiver = ReceiverServer(Receiver(make_settings(redis_url, heartbeat_seconds=60.0)), "127.0.0.1", 0).start()
    try:
        _framed_as_the_server_frames(receiver, rclient)
    finally:
        receiver.stop()


def _framed_as_the_server_frames(receiver: ReceiverServer, rclient: redis.Redis) -> None:
    modern = Stream(receiver.url).open()
    assert "transfer-encoding: chunked" in modern.head.lower()
    host, port = receiver.url.removeprefix("http://").split(":")
    old = socket.create_connection((host, int(port)), timeout=WAIT)
    old.sendall(f"GET /v1/repos/{REPO}/events HTTP/1.0\r\nAuthorization: Bearer {TOKEN}\r\n\r\n".encode())
    received = b""
    while b"connected to" not in received:
        more = old.recv(65536)
        assert more, f"the HTTP/1.0 stream ended before its greeting: {received!r}"
        received += more
    fanout = receiver.app.fanout
    assert fanout is not None
    wait_until(lambda: len(fanout.subscribers(REPO)) == 2
               and all(sub.transport is not None for sub in fanout.subscribers(REPO)), WAIT, "both streams attached")
    event = HeadEvent(repo=REPO, sha=SHA3, before=None, cause="push")
    publish_head(rclient, event)
    assert modern.events(1)[0]["id"] == SHA3
    wanted = f"event: head\nid: {SHA3}\ndata: {event.to_json()}\n\n".encode()
    while wanted not in received:
        more = old.recv(65536)
        assert more, f"the HTTP/1.0 stream ended before the event: {received!r}"
        received += more
    head, _, body = received.partition(b"\r\n\r\n")
    assert b"transfer-encoding" not in head.lower()
    assert body.startswith(f"retry: 3000\n: connected to {REPO}\n\n".encode())
    assert set(body.replace(wanted, b"").split(b"\n\n")) <= {f"retry: 3000\n: connected to {REPO}".encode(),
                                                            b": keepalive", b""}
    old.close()
    modern.close()


def test_idle_streams_get_heartbeats(receiver: ReceiverServer) -> None:
    stream = Stream(receiver.url).open()
    assert stream.blocks(3)[1:] == [": keepalive", ": keepalive"]
    stream.close()


def test_a_reconnecting_agent_gets_the_head_it_missed(receiver: ReceiverServer, rclient: redis.Redis) -> None:
    publish_head(rclient, HeadEvent(repo=REPO, sha=SHA1, before=None, cause="push"))
    publish_head(rclient, HeadEvent(repo=REPO, sha=SHA2, before=SHA1, cause="push"))
    behind = Stream(receiver.url, last_id=SHA1).open()
    assert behind.events(1)[0]["id"] == SHA2
    behind.close()
    current = Stream(receiver.url, last_id=SHA2).open()
    assert current.blocks(2)[1] == ": keepalive"  # nothing missed, nothing replayed
    current.close()


@pytest.mark.parametrize(("authorization", "status", "words"), [
    (None, 401, "a bearer token is required"),
    ("Basic dXNlcjpwYXNz", 401, "a bearer token is required"),
    ("Bearer ", 401, "a bearer token is required"),
    ("Bearer wrong-token", 401, "only the operator token does, and this is not it"),
    (f"Bearer {TOKEN}x", 401, "an agent's forge token cannot open streams here"),
])
def test_without_an_access_check_only_the_operator_token_opens_streams(
        receiver: ReceiverServer, authorization: str | None, status: int, words: str) -> None:
    headers = {"Authorization": authorization} if authorization else {}
    resp = requests.get(f"{receiver.url}/v1/repos/{REPO}/events", headers=headers, timeout=10)
    assert resp.status_code == status
    assert resp.headers["WWW-Authenticate"].startswith("Bearer")
    assert words in resp.json()["message"]


def test_a_repository_outside_memrepo_repos_is_404(receiver: ReceiverServer) -> None:
    resp = requests.get(f"{receiver.url}/v1/repos/mallory/memory/events", timeout=10,
                        headers={"Authorization": f"Bearer {TOKEN}"})
    assert resp.status_code == 404
    assert "mallory/memory" in resp.json()["message"]


def test_only_get_opens_a_stream(receiver: ReceiverServer) -> None:
    resp = requests.post(f"{receiver.url}/v1/repos/{REPO}/events", timeout=10,
                         headers={"Authorization": f"Bearer {TOKEN}"})
    assert resp.status_code == 405


# ---------------------------------------------------------------------------------- at scale
def test_many_idle_streams_hold_no_thread_and_no_redis_connection(receiver: ReceiverServer,
                                                                 rclient: redis.Redis) -> None:
    """Forty idle streams made `memrepo serve` (gthread, 2 x 16 threads) deaf, and a hundred
    exhausted `serve --local`'s Redis connections. Here 200 streams are open: webhooks and
    /healthz are answered, no Redis connection was added for them, and one push reaches all."""
    before = len(rclient.client_list())
    streams = [Stream(receiver.url) for _ in range(200)]
    for stream in streams:
        assert stream.open().status == 200
    wait_until(lambda: receiver.app.open_streams() == 200, WAIT, "200 streams registered")
    health = requests.get(f"{receiver.url}/healthz", timeout=10)
    assert health.status_code == 200 and health.json()["streams"] == 200
    assert len(rclient.client_list()) <= before + 2  # the process's subscription and one reader, at most
    assert deliver_push(receiver.url, push(), "push-many").status_code == 202
    for stream in streams:
        assert stream.events(1)[0]["id"] == SHA2
        stream.close()
    wait_until(lambda: receiver.app.open_streams() == 0, WAIT, "closed streams let go")


def test_a_subscriber_that_never_reads_is_dropped_and_the_others_get_everything(
        redis_url: str, rclient: redis.Redis) -> None:
    server = ReceiverServer(Receiver(make_settings(redis_url, heartbeat_seconds=30.0), buffer=4), "127.0.0.1",
                            0).start()
    try:
        stuck = Stream(server.url, rcvbuf=4096).open()  # headers read, then never another byte
        reader = Stream(server.url).open()
        wait_until(lambda: server.app.open_streams() == 2, WAIT, "both streams registered")
        assert server.app.fanout is not None
        published = 0
        while server.app.fanout.drops == 0 and published < 50_000:
            batch = [HeadEvent(repo=REPO, sha=f"{published + n:040x}", before=None, cause="push") for n in range(200)]
            with rclient.pipeline(transaction=False) as pipe:
                for event in batch:
                    pipe.publish(channel(REPO), event.to_json())
                pipe.execute()
            published += len(batch)
            got = reader.events(len(batch))  # the reader keeps up, as an agent does
            assert [e["id"] for e in got] == [event.sha for event in batch]
        assert server.app.fanout.drops == 1
        wait_until(lambda: server.app.open_streams() == 1, WAIT, "the stuck stream let go")
        assert stuck.ended()  # its connection was cut; the agent reconnects with Last-Event-ID
        publish_head(rclient, HeadEvent(repo=REPO, sha=SHA3, before=None, cause="push"))
        again = Stream(server.url, last_id="0" * 40).open()
        assert again.events(1)[0]["id"] == SHA3  # the newest head at once
        again.close()
        stuck.close()
        reader.close()
    finally:
        server.stop()


# ---------------------------------------------------------------------------------- outages and restarts
@pytest.fixture
def own_redis() -> Iterator[RedisServer]:
    with RedisServer() as server:
        yield server


def test_streams_end_when_redis_goes_away_and_open_again_when_it_is_back(own_redis: RedisServer) -> None:
    server = ReceiverServer(Receiver(make_settings(own_redis.url)), "127.0.0.1", 0).start()
    try:
        stream = Stream(server.url).open()
        stream.blocks(1)
        own_redis.stop()
        assert stream.ended()  # ends (the agent reconnects) instead of hanging
        refused = requests.get(f"{server.url}/v1/repos/{REPO}/events", timeout=10,
                               headers={"Authorization": f"Bearer {TOKEN}"})
        assert refused.status_code == 503 and refused.headers["Retry-After"] == "5"
        assert refused.json()["message"].startswith("Redis is not reachable")
        own_redis.start()
        wait_until(lambda: server.app.fanout is not None and server.app.fanout.ready.is_set(), WAIT,
                   "the subscription made again")
        back = Stream(server.url).open()
        assert back.status == 200
        back.blocks(1)
        client = redis.Redis.from_url(own_redis.url)
        publish_head(client, HeadEvent(repo=REPO, sha=SHA3, before=None, cause="push"))
        assert back.events(1)[0]["id"] == SHA3
        client.close()
        back.close()
    finally:
        server.stop()


def test_agents_catch_up_through_last_event_id_after_a_receiver_restart(redis_url: str,
                                                                       rclient: redis.Redis) -> None:
    settings: Settings = make_settings(redis_url)
    first = ReceiverServer(Receiver(settings), "127.0.0.1", 0).start()
    port = first.port
    streams = [Stream(first.url) for _ in range(20)]
    for stream in streams:
        stream.open()
    publish_head(rclient, HeadEvent(repo=REPO, sha=SHA1, before=None, cause="push"))
    last = [stream.events(1)[0]["id"] for stream in streams]
    assert last == [SHA1] * 20
    first.stop()
    for stream in streams:
        assert stream.ended()
        stream.close()
    publish_head(rclient, HeadEvent(repo=REPO, sha=SHA2, before=SHA1, cause="push"))  # while it was down
    second = ReceiverServer(Receiver(settings), "127.0.0.1", port).start()
    try:
        again = [Stream(second.url, last_id=seen).open() for seen in last]
        assert [stream.events(1)[0]["id"] for stream in again] == [SHA2] * 20
        for stream in again:
            stream.close()
    finally:
        second.stop()
