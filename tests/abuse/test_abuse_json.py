"""Bounds on JSON from outside that the SDKs and clients memrepo builds on would parse unbounded.

An MCP client can send a stdio line or an HTTP body of 100 MB, or 100,000 nested brackets: the
server reads stdio in bounded pieces and HTTP bodies through a bound (bot/mcp/bounds.py), and
answers either with a JSON-RPC parse error (413 over HTTP for the long body) and goes on, its
memory grown by no more than a few times the bound (VmHWM of the real process).

A hostile forge (or anything in GitHub's place) can answer 100,000 nested brackets, which
PyGithub's own json.loads meets with RecursionError, or a body of hundreds of megabytes: the
forge client reads every answer through bot/bounded_json.py and a length bound, so either is one
forge error naming the operation.
"""

from __future__ import annotations

import hashlib
import json
import os
import select
import socket
import subprocess
import time
import tracemalloc
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
import responses
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.bounded_json import MAX_DEPTH
from bot.forge.client import ForgeClient
from bot.forge.credentials import AppCredentials, TokenCredentials
from bot.forge.errors import BadAnswer, ForgeError, NotFound
from bot.forge.retry import RetryPolicy
from bot.mcp.bounds import MAX_MESSAGE
from bot.memfs.store.repo import MemoryRepo
from bot.transcript import incremental
from tests.forge.test_forge_client import _private_key
from tests.mcp.test_mcp_auth import ACCEPT, INITIALIZE
from tests.mcp.test_mcp_transports import TIMEOUT, HttpServer, command

DEEP = 100_000
API = "https://api.github.com"
API_SENT = "https://api.github.com:443"  # PyGithub names the port; `responses` matches URLs as sent
ANSWER_WAIT = 120  # seconds: reading 40 MB (ten times the bound) on a loaded machine; only a failure waits
HUGE_LINE = b'{"jsonrpc": "2.0", "id": 9, "method": "ping", "params": {"pad": "' + b"x" * 40_000_000 + b'"}}'


def nested(depth: int, inner: str = "1") -> str:
    return "[" * depth + inner + "]" * depth


def forge() -> ForgeClient:
    return ForgeClient("acme/memory", TokenCredentials("ghp_secret_value"), base_url=API, min_write_interval=0,
                       sleep=lambda _: None, policy=RetryPolicy(max_total_seconds=5.0))


# ------------------------------------------------------------------------------ forge answers
@responses.activate
@pytest.mark.parametrize("status", [200, 404, 422])
def test_a_deep_forge_answer_is_one_forge_error_not_a_recursion_error(status: int) -> None:
    responses.get(f"{API_SENT}/repos/acme/memory/pulls/7", status=status,
                  body='{"message": ' + nested(DEEP) + "}", content_type="application/json")
    with pytest.raises(ForgeError) as caught:
        forge().get_pull_request(7)
    message = str(caught.value)
    assert "\n" not in message and f"deeper than {MAX_DEPTH}" in message
    assert message.startswith("read pull request #7 of acme/memory")
    assert isinstance(caught.value, BadAnswer if status == 200 else NotFound if status == 404 else ForgeError)


@responses.activate
def test_a_deep_answer_to_a_paged_list_is_one_forge_error() -> None:
    responses.get(f"{API_SENT}/repos/acme/memory/pulls", body=nested(DEEP), content_type="application/json")
    with pytest.raises(BadAnswer, match=f"deeper than {MAX_DEPTH}"):
        forge().list_open_pull_requests()


@responses.activate
def test_a_huge_forge_answer_is_refused_unparsed() -> None:
    body = '{"number": 7, "title": "' + "x" * (64 * 1024 * 1024) + '"}'
    responses.get(f"{API_SENT}/repos/acme/memory/pulls/7", body=body, content_type="application/json")
    with pytest.raises(BadAnswer) as caught:
        forge().get_pull_request(7)
    assert "\n" not in str(caught.value) and "longer than" in str(caught.value)


@responses.activate
def test_a_broken_json_answer_is_a_bad_answer_not_a_traceback() -> None:
    responses.get(f"{API_SENT}/repos/acme/memory/pulls/7", body='{"number": 7,', content_type="application/json")
    with pytest.raises(BadAnswer, match="read pull request #7"):
        forge().get_pull_request(7)


@responses.activate
def test_is_merged_reads_a_deep_404_as_not_merged_and_a_deep_200_as_one_forge_error() -> None:
    responses.get(f"{API_SENT}/repos/acme/memory/pulls/7/merge", status=404, body=nested(DEEP))
    responses.get(f"{API_SENT}/repos/acme/memory/pulls/8/merge", status=200, body=nested(DEEP))
    assert forge().is_merged(7) is False
    with pytest.raises(ForgeError, match=f"deeper than {MAX_DEPTH}"):
        forge().is_merged(8)


@responses.activate
def test_a_deep_installation_token_answer_is_one_forge_error() -> None:
    """The App's own calls (its installation token) are parsed by PyGithub: its RecursionError
    is the one forge error too."""
    client = ForgeClient("acme/memory", AppCredentials(42, _private_key(), installation_id=5), base_url=API,
                         min_write_interval=0, sleep=lambda _: None)
    responses.post(f"{API_SENT}/app/installations/5/access_tokens", status=201, body=nested(DEEP))
    with pytest.raises(BadAnswer) as caught:
        client.get_pull_request(7)
    assert "\n" not in str(caught.value) and "installation token" in str(caught.value)


# ------------------------------------------------------------------------------ MCP
def peak_memory(pid: int) -> int:
    """A process's peak resident memory so far, in bytes (VmHWM)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")


def rpc(ident: int, path: str = '"system"') -> str:
    return json.dumps({"jsonrpc": "2.0", "id": ident, "method": "tools/call",
                       "params": {"name": "memory_view", "arguments": {"path": json.loads(path)}}})


class StdioServer:
    """`memrepo mcp` on stdio in a child process, written to and answered line by line."""

    def __init__(self, memory: MemoryRepo, tmp_path: Path) -> None:
        self.process = subprocess.Popen(command(memory, tmp_path), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE)
        self.answers: dict[Any, dict[str, Any]] = {}
        self.unread = b""  # read from the pipe, not yet a whole line

    def send(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def answer(self, ident: Any) -> dict[str, Any]:
        """The answer to `ident`, read from the pipe itself: a buffered reader may hold a second
        answer that select() then never reports."""
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        deadline = time.monotonic() + ANSWER_WAIT
        while ident not in self.answers:
            while b"\n" not in self.unread:
                assert select.select([fd], [], [], max(0.0, deadline - time.monotonic()))[0], \
                    f"no answer {ident} within {ANSWER_WAIT}s"
                chunk = os.read(fd, 1 << 16)
                assert chunk, "the server ended without answering"
                self.unread += chunk
            line, _, self.unread = self.unread.partition(b"\n")
            answer = json.loads(line)
            self.answers[answer.get("id")] = answer
        return self.answers.pop(ident)

    def stop(self) -> str:
        try:
            _, err = self.process.communicate(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            self.process.kill()
            _, err = self.process.communicate()
        return err.decode()


@pytest.mark.parametrize("line", [
    pytest.param(HUGE_LINE, id="40MB"),
    pytest.param(b'{"jsonrpc": "2.0", "id": 2, "method": "ping", "params": ' + nested(DEEP).encode() + b"}", id="deep"),
])
def test_mcp_on_stdio_refuses_a_huge_or_deep_line_in_bounded_memory_and_goes_on(
        line: bytes, memory: MemoryRepo, tmp_path: Path) -> None:
    server = StdioServer(memory, tmp_path)
    try:
        server.send((json.dumps(INITIALIZE) + "\n" + '{"jsonrpc": "2.0", "method": "notifications/initialized"}\n'
                     + rpc(2) + "\n").encode())
        assert "persona" in json.dumps(server.answer(2)["result"])
        before = peak_memory(server.process.pid)
        for start in range(0, len(line), 1 << 20):
            server.send(line[start:start + (1 << 20)])
        server.send(b"\n" + rpc(3).encode() + b"\n")
        refused = server.answer(None)
        assert "persona" in json.dumps(server.answer(3)["result"])
        grown = peak_memory(server.process.pid) - before
    finally:
        err = server.stop()
    assert server.process.returncode == 0 and "Traceback" not in err
    assert refused["error"]["code"] == -32700
    assert refused["error"]["message"].startswith("not a JSON-RPC message memrepo can read: the message ")
    assert grown < 3 * MAX_MESSAGE, f"the server grew by {grown} bytes"


def http_exchange(url: str, head: bytes, body: Iterator[bytes]) -> tuple[int, bytes]:
    """Send a request's head and then its body piece by piece until the server answers (it
    may answer and close early); the status and body of its answer."""
    parts = urllib.parse.urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port), timeout=TIMEOUT) as sock:
        sock.sendall(head)
        for piece in body:
            if select.select([sock], [], [], 0)[0]:
                break
            try:
                sock.sendall(piece)
            except OSError:
                break
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
            if b"\r\n\r\n" in answer and answer.endswith(b"}"):
                break
    status = int(answer.split(b" ", 2)[1])
    return status, answer.partition(b"\r\n\r\n")[2]


def test_mcp_over_http_refuses_a_huge_body_413_unread_and_goes_on(memory: MemoryRepo, tmp_path: Path) -> None:
    server = HttpServer(command(memory, tmp_path, "--http", "0"))
    try:
        path = urllib.parse.urlsplit(server.url).path.encode()
        before = peak_memory(server.process.pid)
        declared = (b"POST " + path + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                    b"Accept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n" % len(HUGE_LINE))
        status, body = http_exchange(server.url, declared, iter([HUGE_LINE[:1 << 20]]))
        assert status == 413 and json.loads(body)["error"]["code"] == -32700
        chunked = (b"POST " + path + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                   b"Accept: application/json, text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
        pieces = (b"%x\r\n" % (1 << 20) + HUGE_LINE[i:i + (1 << 20)] + b"\r\n"
                  for i in range(0, len(HUGE_LINE), 1 << 20))
        status, body = http_exchange(server.url, chunked, pieces)
        assert status == 413 and "longer than the" in json.loads(body)["error"]["message"]
        grown = peak_memory(server.process.pid) - before
        assert requests.post(server.url, json=INITIALIZE, headers=ACCEPT, timeout=TIMEOUT).status_code == 200
    finally:
        _, _, err = server.stop()
    assert "Traceback" not in err
    assert grown < 3 * MAX_MESSAGE, f"the server grew by {grown} bytes"


# ------------------------------------------------------------------------------ transcripts
def whole_file_read(data: bytes, cursor: incremental.Cursor | None) -> tuple[list[bytes], int, str, incremental.Cursor,
                                                                             int]:
    """What reading the file whole gives (the reader before it read in pieces)."""
    complete = data[:data.rfind(b"\n") + 1]
    status, start = incremental.change(cursor, complete)
    after = incremental.Cursor(len(complete), hashlib.sha256(complete).hexdigest())
    return ([] if status == incremental.UNCHANGED else incremental.complete_lines(complete), start, status, after,
            len(data) - len(complete))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=60).map(lambda b: b.replace(b"\0", b"\n")), cut=st.integers(0, 70),
       same=st.booleans(), size=st.integers(1, 7))
def test_reading_in_pieces_reads_as_reading_whole(data: bytes, cut: int, same: bool, size: int,
                                                 tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(incremental, "READ_SIZE", size)
    path = tmp_path / "t.jsonl"
    path.write_bytes(data)
    before = data[:cut] if same else data[:cut] + b"x"
    cursor = incremental.Cursor(len(before[:before.rfind(b"\n") + 1]),
                                hashlib.sha256(before[:before.rfind(b"\n") + 1]).hexdigest()) if cut < 70 else None
    found = incremental.read(path, cursor)
    assert (found.lines, found.start, found.status, found.after, found.unfinished) == whole_file_read(data, cursor)


def test_a_50_mb_transcript_line_is_a_problem_of_its_own_and_the_next_line_is_read(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    with open(path, "wb") as f:
        f.write(b'{"n": 1}\n{"n": "' + b"x" * 50_000_000 + b'"}\n{"n": 3}\n{"n": 4')
    tracemalloc.start()
    try:
        found = incremental.read(path, None)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 3 * incremental.MAX_LINE, f"reading held {peak} bytes"
    reading = incremental.read_lines(found.lines, 0, lambda row, _new: [row])  # type: ignore[arg-type,list-item]
    assert reading.messages == [{"n": 1}, {"n": 3}]
    assert len(reading.problems) == 1 and reading.problems[0].startswith("line 2: the line is 50000010 bytes long")
    assert found.unfinished == len(b'{"n": 4') and found.after.size == path.stat().st_size - found.unfinished
    again = incremental.read(path, found.after)
    assert again.status == incremental.UNCHANGED and again.lines == []
