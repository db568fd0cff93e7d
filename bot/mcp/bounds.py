"""Bounds on what an MCP client sends, before the SDK reads it.

The `mcp` SDK reads a stdio line with `readline()` and an HTTP body with `request.body()`,
whole, however long, and then parses it. So the stdio transport reads standard input here, in
pieces of READ_SIZE through `LineSplitter` (bot/bounded_json.py), and hands the SDK (its
`stdio_server(stdin=...)`) only lines of at most MAX_MESSAGE bytes that nest no deeper than
bot/bounded_json.py's bound; each other line is answered with a JSON-RPC parse error (id null)
and passed over unheld. Over HTTP, `bounded_body` wraps the ASGI app: a body declared or
found longer than MAX_MESSAGE is answered 413 before more of it is read, one nesting too deep
400 with a JSON-RPC parse error, as the SDK answers a body that is no JSON.

MAX_MESSAGE is 4 MiB: a memory tool call carries at most one memory file's text, far less.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

import anyio
import mcp_types as types

from bot.bounded_json import MAX_DEPTH, LineSplitter, Overlong, TooDeepError, too_deep
from bot.errors import MemrepoError
from bot.mcp import texts

MCP_MESSAGE_LONG = "the message is {size} bytes long, more than the {limit} memrepo reads"
MCP_MESSAGE_LONG_SENT = "the message is longer than the {limit} bytes memrepo reads"
MCP_MESSAGE_DEEP = "the message nests arrays and objects deeper than {limit} levels, more than memrepo reads"

MAX_MESSAGE = 4 * 1024 * 1024  # bytes of one stdio line (with its newline) or one HTTP body
READ_SIZE = 64 * 1024  # bytes read from standard input at a time

Asgi = Callable[[dict[str, Any], Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]], Awaitable[None]]


class Refused(MemrepoError):
    """A message refused before the SDK saw it (too long, too deep); its text says why."""


def refusal(line: bytes | Overlong) -> tuple[str | None, Refused | None]:
    """A line as the SDK reads it (UTF-8, undecodable bytes replaced, as its own reader does),
    or why it is refused: longer than MAX_MESSAGE, or nesting deeper than MAX_DEPTH."""
    if isinstance(line, Overlong):
        return None, Refused(MCP_MESSAGE_LONG.format(size=line.size, limit=MAX_MESSAGE))
    text = line.decode("utf-8", "replace")
    if too_deep(text):
        return None, TooDeepError(MCP_MESSAGE_DEEP.format(limit=MAX_DEPTH))
    return text, None


@contextlib.contextmanager
def claimed_stdin() -> Iterator[int]:
    """A private descriptor of standard input, fd 0 pointing at the null device meanwhile, as
    the SDK's own stdio transport does: a child process (git) reads nothing of the protocol.
    The private descriptor is left open at the end: a reading thread may still wait on it."""
    private = os.dup(0)
    devnull = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(devnull, 0)
    finally:
        os.close(devnull)
    try:
        yield private
    finally:
        os.dup2(private, 0)


async def bounded_lines(fd: int, refusals: Any) -> AsyncIterator[str]:
    """The lines read from `fd` that the SDK may parse; each refused one is sent to `refusals`
    (an anyio send stream) as an exception saying why, in its place."""
    splitter = LineSplitter(MAX_MESSAGE)
    while True:
        chunk = await anyio.to_thread.run_sync(os.read, fd, READ_SIZE, abandon_on_cancel=True)
        lines: list[bytes | Overlong] = splitter.feed(chunk) if chunk else splitter.flush()
        for line in lines:
            text, refused = refusal(line)
            if refused is not None:
                await refusals.send(refused)
            elif text.strip():
                yield text
        if not chunk:
            return


def refused_answer(problem: Exception) -> types.JSONRPCError:
    """JSON-RPC's answer to a message refused unread: a parse error, id null."""
    return types.JSONRPCError(jsonrpc="2.0", id=None, error=types.ErrorData(
        code=types.PARSE_ERROR, message=texts.MCP_UNREADABLE.format(problem=problem)))


def bounded_body(app: Asgi, limit: int = MAX_MESSAGE) -> Asgi:
    """`app` behind a bound on request bodies: 413 for one declared or found longer than
    `limit` (read no further), 400 with a JSON-RPC parse error for one nesting deeper than
    MAX_DEPTH; the SDK reads the others as sent."""

    async def bounded(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        declared = next((value for name, value in scope.get("headers", ()) if name == b"content-length"), None)
        if declared is not None and declared.strip().isdigit() and int(declared) > limit:
            await _refuse(send, 413, Refused(MCP_MESSAGE_LONG.format(size=int(declared), limit=limit)))
            return
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return
            body += message.get("body", b"")
            if len(body) > limit:
                await _refuse(send, 413, Refused(MCP_MESSAGE_LONG_SENT.format(limit=limit)))
                return
            if not message.get("more_body", False):
                break
        try:
            text = bytes(body).decode(json.detect_encoding(body), "surrogatepass")
        except UnicodeDecodeError:
            text = ""  # the SDK answers what is no JSON itself
        if too_deep(text):
            await _refuse(send, 400, TooDeepError(MCP_MESSAGE_DEEP.format(limit=MAX_DEPTH)))
            return
        replayed = False

        async def replay() -> Any:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": bytes(body), "more_body": False}

        await app(scope, replay, send)

    return bounded


async def _refuse(send: Any, status: int, problem: Exception) -> None:
    body = refused_answer(problem).model_dump_json(by_alias=True, exclude_unset=True).encode()
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
        (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body})
