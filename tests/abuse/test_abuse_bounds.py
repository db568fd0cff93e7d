"""Bounds where input arrives: a hostile event stream cannot grow `memrepo follow`'s memory.

The head follower (bot/notify/follower.py) reads the receiver's event stream. A real head event
is under 1 KB; a receiver (or anything in its place) that sends a line of hundreds of megabytes,
or an event of endless `data:` lines, must not be held whole: the decoder keeps at most
MAX_EVENT_LINE characters, skips the rest to the line's end, drops that event with one log line
and reads the next. The stream is read from the socket in bounded pieces, so neither a body
without length nor one enormous HTTP chunk is buffered by the HTTP client either. The tests
drive the decoder by tables and the subscriber against a tiny hostile server over real HTTP,
with tracemalloc measuring the peak memory while 20 MB arrive.

Every JSON read from outside goes through bot/bounded_json.py: Claude Code's hook input (also
bounded in length), and Claude Code's settings file. 100,000 nested brackets
are a one-line refusal there, never a RecursionError's traceback."""

from __future__ import annotations

import io
import json
import socket
import subprocess
import sys
import threading
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from bot.bounded_json import JSON_TOO_DEEP, MAX_DEPTH
from bot.claude_code import hook, install
from bot.claude_code.hook import HOOK_BAD_INPUT, HOOK_INPUT_TOO_LONG, HOOK_MODULE
from bot.errors import MemrepoError
from bot.memfs.store.repo import MemoryRepo
from bot.notify.events import HeadEvent
from bot.notify.follower import (
    MAX_EVENT_LINE,
    READ_SIZE,
    SUBSCRIBER_EVENT_TOO_LONG,
    HeadSubscriber,
    SSEDecoder,
    SSEMessage,
    bounded_chunks,
)
from tests.waiting import wait_until

HUGE = 20 * 1024 * 1024  # bytes in the hostile line: far beyond the bound, small enough to send in a second
PIECE = 1024 * 1024
REPO = "alice/memory"
GOOD = HeadEvent(repo=REPO, sha="b" * 40, before="a" * 40, cause="push").to_json()
PEAK = 4 * 1024 * 1024  # bytes: what reading 20 MB may allocate at most (the bound is 64 KiB, twice for the event)


# ---------------------------------------------------------------------------------- the decoder
def fed(decoder: SSEDecoder, chunks: list[str]) -> list[SSEMessage]:
    return [message for chunk in chunks for message in decoder.feed(chunk)]


@pytest.mark.parametrize(("chunks", "expected", "refused"), [
    # a line exactly at the bound is an event; one character more is not, and the next event is read
    (["data: " + "x" * (MAX_EVENT_LINE - 6) + "\n\n"], ["x" * (MAX_EVENT_LINE - 6)], 0),
    (["data: " + "x" * (MAX_EVENT_LINE - 5) + "\n\ndata: next\n\n"], ["next"], 1),
    # a long comment or unknown field spoils the event it is in, not the next one
    ([": " + "c" * MAX_EVENT_LINE + "\ndata: lost\n\ndata: kept\n\n"], ["kept"], 1),
    # many short data lines adding up past the bound: the event is dropped whole, never half
    (["data: " + "d" * 1000 + "\n"] * 70 + ["\n", "data: after\n\n"], ["after"], 1),
    # the over-long line cut by CR, CRLF split across chunks, then a good event
    (["data: " + "y" * MAX_EVENT_LINE, "y\r", "\ndata: bad\r\n\r\n", "data: ok\r\n\r\n"], ["ok"], 1),
    # two over-long events are two refusals
    (["data: " + "z" * MAX_EVENT_LINE + "z\n\n"] * 2 + ["data: ok\n\n"], ["ok"], 2),
])
def test_an_over_long_line_or_event_is_dropped_and_the_next_is_read(chunks: list[str], expected: list[str],
                                                                     refused: int) -> None:
    decoder = SSEDecoder()
    assert [message.data for message in fed(decoder, chunks)] == expected
    assert decoder.too_long == refused


def test_the_decoder_holds_no_more_than_its_bound_of_an_endless_line() -> None:
    decoder = SSEDecoder()
    decoder.feed("event: head\ndata: ")
    for _ in range(HUGE // PIECE):
        assert decoder.feed("x" * PIECE) == []
        assert decoder.buffered <= MAX_EVENT_LINE
    assert decoder.feed("\n\nevent: head\ndata: " + GOOD + "\n\n") == [SSEMessage("head", GOOD, None)]
    assert (decoder.too_long, decoder.buffered) == (1, 0)


# ---------------------------------------------------------------------------------- over HTTP
class HostileReceiver:
    """An event stream that sends `data: ` and 20 MB without a line end, then a good head event,
    then holds the connection open until closed. `chunked`: as one HTTP chunk of 20 MB (so a
    client reading whole chunks holds it whole); otherwise a body without a length."""

    def __init__(self, chunked: bool) -> None:
        self.chunked = chunked
        self.server = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.server.getsockname()[1]}/v1/repos/{REPO}/events"
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        try:
            conn, _ = self.server.accept()
        except OSError:
            return
        with conn:
            try:
                conn.recv(65536)
                head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                head += "Transfer-Encoding: chunked\r\n\r\n" if self.chunked else "Connection: close\r\n\r\n"
                conn.sendall(head.encode())
                body = [b"retry: 1000\n\nevent: head\ndata: "] + [b"x" * PIECE] * (HUGE // PIECE)
                body.append(f"\n\nevent: head\ndata: {GOOD}\n\n".encode())
                if self.chunked:
                    size = sum(map(len, body[:-1]))
                    conn.sendall(f"{size:x}\r\n".encode())
                    for piece in body[:-1]:
                        conn.sendall(piece)
                    conn.sendall(f"\r\n{len(body[-1]):x}\r\n".encode() + body[-1] + b"\r\n")
                else:
                    for piece in body:
                        conn.sendall(piece)
                self.done.wait(30)
            except OSError:
                return

    def close(self) -> None:
        self.done.set()
        self.server.close()


@pytest.fixture(params=[True, False], ids=["one-huge-chunk", "no-length"])
def hostile(request: pytest.FixtureRequest) -> Iterator[HostileReceiver]:
    receiver = HostileReceiver(request.param)
    yield receiver
    receiver.close()


def test_a_streamed_body_is_read_in_bounded_pieces(hostile: HostileReceiver) -> None:
    with requests.get(hostile.url, stream=True, timeout=10) as response:
        total = 0
        for chunk in bounded_chunks(response):
            assert len(chunk) <= READ_SIZE
            total += len(chunk)
            if total > HUGE:
                break
    assert total > HUGE


def test_follow_survives_a_20_mb_line_in_bounded_memory_and_reads_the_next_event(
        hostile: HostileReceiver, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    syncs: list[int] = []
    sub = HeadSubscriber(tmp_path, hostile.url, "token", syncer=lambda: syncs.append(1) and None)
    tracemalloc.start()
    try:
        with sub:
            # the catch-up sync after connecting, then the good event after the 20 MB line
            wait_until(lambda: len(syncs) >= 2, timeout=30, message="the event after the hostile line")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < PEAK, f"reading 20 MB peaked at {peak} bytes"
    said = SUBSCRIBER_EVENT_TOO_LONG.format(url=hostile.url, limit=MAX_EVENT_LINE)
    assert [r.getMessage() for r in caplog.records if "longer than" in r.getMessage()] == [said]


# ---------------------------------------------------------------------------------- JSON from outside
DEEP = 100_000


def nested(depth: int) -> str:
    return "[" * depth + "1" + "]" * depth


@pytest.mark.parametrize("event", ["session-start", "prompt", "stop", "session-end", "post-tool"])
@pytest.mark.parametrize("body", [nested(DEEP), '{"session_id": ' + nested(DEEP) + "}"], ids=["array", "in-object"])
def test_a_hook_given_deep_json_refuses_in_one_line(event: str, body: str, memory: MemoryRepo) -> None:
    done = subprocess.run([sys.executable, "-m", HOOK_MODULE, event, "--repo", str(memory.root)], input=body,
                          capture_output=True, text=True, timeout=60)
    said = HOOK_BAD_INPUT.format(problem=JSON_TOO_DEEP.format(what="the hook input",
                                                                                    limit=MAX_DEPTH))
    assert (done.returncode, done.stdout, done.stderr) == (1, "", said + "\n")


def test_hook_input_past_its_bound_is_refused_unread(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hook, "MAX_INPUT", 1000)
    body = json.dumps({"session_id": "s", "prompt": "p" * 1000})
    with pytest.raises(SystemExit) as refused:
        hook.read_input(io.StringIO(body))
    assert str(refused.value) == HOOK_BAD_INPUT.format(
        problem=HOOK_INPUT_TOO_LONG.format(limit=1000))
    assert hook.read_input(io.StringIO('{"prompt": "' + "[{" * 40 + '"}')) == {"prompt": "[{" * 40}


def test_claude_codes_settings_nested_deep_are_refused_by_name(tmp_path: Path) -> None:
    settings = tmp_path / "settings.json"
    settings.write_text('{"hooks": ' + nested(DEEP) + "}", encoding="utf-8")
    with pytest.raises(MemrepoError, match=f"{settings} nests arrays and objects deeper than {MAX_DEPTH}"):
        install.Settings.read(settings)
