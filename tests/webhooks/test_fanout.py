"""The fan-out's subscriber (webhooks/streams/fanout.py) on its own: an attached subscriber gets the
same bytes written into its connection, framed as its response is, and is dropped once the
connection holds more than its bound unsent; a queued one (a server whose connection the
stream cannot reach) is dropped once its buffer of events is full. The receiver as it runs is
tested in tests/webhooks/test_event_stream.py."""

from __future__ import annotations

import asyncio

from webhooks.streams.fanout import END, Subscriber, chunk


class Connection:
    """An in-memory transport: keeps what is written; `unsent` plays the kernel that stopped
    taking bytes."""

    def __init__(self) -> None:
        self.written: list[bytes] = []
        self.unsent = 0
        self.closing = False

    def write(self, data: bytes) -> None:
        self.written.append(data)

    def is_closing(self) -> bool:
        return self.closing

    def get_write_buffer_size(self) -> int:
        return self.unsent


EVENT = b"event: head\nid: " + b"2" * 40 + b"\ndata: {}\n\n"


def test_a_chunk_is_what_http_1_1_chunked_coding_makes_of_the_bytes() -> None:
    assert chunk(b"hello") == b"5\r\nhello\r\n"
    assert chunk(EVENT) == b"%x\r\n" % len(EVENT) + EVENT + b"\r\n"


def test_an_attached_subscriber_is_written_the_events_queued_before_then_each_event_as_it_comes() -> None:
    sub = Subscriber("alice/memory", buffer=4)
    assert sub.push(b"early", 4)  # before the response began: queued
    connection = Connection()
    assert sub.attach(connection, chunked=True)
    assert connection.written == [chunk(b"early")]
    assert sub.push(EVENT, 4, chunk(EVENT))
    assert connection.written[-1] == chunk(EVENT)
    raw = Subscriber("alice/memory", buffer=4)
    unframed = Connection()
    raw.attach(unframed, chunked=False)
    assert raw.push(EVENT, 4, chunk(EVENT))
    assert unframed.written == [EVENT]
    assert not sub.buffer and not raw.buffer  # nothing waits for the stream's coroutine


def test_an_attached_subscriber_whose_reader_stopped_is_dropped_and_its_connection_cut() -> None:
    cut: list[bool] = []
    sub = Subscriber("alice/memory", buffer=4, unsent=1000)
    sub.on_drop = lambda: cut.append(True)
    connection = Connection()
    sub.attach(connection, chunked=True)
    connection.unsent = 1000  # at the bound: still written
    assert sub.push(EVENT, 4, chunk(EVENT))
    connection.unsent = 1001
    assert not sub.push(EVENT, 4, chunk(EVENT))
    assert sub.dropped and sub.ended and cut == [True]
    assert len(connection.written) == 1
    assert sub.push(EVENT, 4, chunk(EVENT))  # ended: nothing more, and no second drop
    assert len(connection.written) == 1 and cut == [True]


def test_a_closing_connection_is_not_written_and_not_dropped() -> None:
    sub = Subscriber("alice/memory", buffer=4)
    connection = Connection()
    sub.attach(connection, chunked=True)
    connection.closing = True
    assert sub.push(EVENT, 4, chunk(EVENT))
    assert connection.written == [] and not sub.dropped


def test_a_queued_subscriber_hands_its_events_to_its_stream_and_is_dropped_when_its_buffer_is_full() -> None:
    async def scenario() -> None:
        sub = Subscriber("alice/memory", buffer=2)
        loop = asyncio.get_running_loop()
        assert sub.push(b"one", 2) and sub.push(b"two", 2)
        assert await sub.next(loop.time() + 5) == b"one"
        assert sub.push(b"three", 2)
        assert not sub.push(b"four", 2)  # two wait already: the reader stopped
        assert sub.dropped
        assert [await sub.next(loop.time() + 5) for _ in range(3)] == [b"two", b"three", END]
        idle = Subscriber("alice/memory", buffer=2)
        assert await idle.next(loop.time()) is None  # the deadline: time for a heartbeat

    asyncio.run(scenario())
