"""Running a MemoryServer on a transport: stdio (the client started us; standard output
carries nothing but protocol) or streamable HTTP (uvicorn on a socket bound here, so a port in
use is one clear error before anything starts). Either way the HEAD watcher runs beside it.

Over HTTP the server offers write tools, so anyone who reaches it can change memory: on an
address other than loopback it refuses to start without a bearer token (MEMREPO_MCP_TOKEN) of at
least 16 characters (bot/bearer.py: the palace's rule), and with a token every request must
carry `Authorization: Bearer <token>` (401 otherwise). Either way it answers nothing a web page
on another origin sent (`browser_refusal`): the write tools are reached by a POST, and a page
open in the user's browser reaches a loopback port too."""

from __future__ import annotations

import hmac
import json
import logging
import socket
import sys
import urllib.parse
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import mcp_types as types
from pydantic import ValidationError

from bot import sockets
from bot.bearer import TOKEN_MIN, is_loopback, required_token
from bot.errors import MemrepoError
from bot.mcp import bounds, texts
from bot.mcp.server import MemoryServer

MCP_TOKEN_REQUIRED = ("memrepo mcp --http on {host} would let anyone who reaches it change memory: set a bearer "
                      "token in {name} (clients send Authorization: Bearer <token>), or serve on 127.0.0.1")
MCP_TOKEN_SHORT = ("{name} is too short: use at least {minimum} characters (a guessable token protects nothing; "
                   "make one with `python3 -c 'import secrets; print(secrets.token_urlsafe(24))'`)")
MCP_NO_BEARER = "this MCP server needs Authorization: Bearer <token> (the token in {name} where it runs)"
MCP_WRONG_BEARER = "the bearer token is not this MCP server's"
MCP_FOREIGN_HOST = ("this MCP server answers only requests addressed to a loopback name, not {host!a} (a page "
                    "whose name was made to resolve to this machine)")
MCP_CROSS_SITE = "this MCP server answers no request a web page on another origin sent ({why})"
MCP_SERVING_HTTP = "memrepo mcp: serving {root} at {url} (Ctrl-C stops)"

log = logging.getLogger("memrepo.mcp")

MCP_PATH = "/mcp"
TOKEN_ENV = "MEMREPO_MCP_TOKEN"


def require_token(host: str, token: str | None) -> str | None:
    """The token to require (None: none), or a one-line MemrepoError: off loopback without one,
    or one shorter than the palace's minimum (bot.bearer's rule, shared with the palace)."""
    return required_token(host, token, missing=MCP_TOKEN_REQUIRED.format(host=host, name=TOKEN_ENV),
                          short=MCP_TOKEN_SHORT.format(name=TOKEN_ENV, minimum=TOKEN_MIN))


Asgi = Callable[[dict[str, Any], Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]], Awaitable[None]]


def bearer_only(app: Asgi, token: str) -> Asgi:
    """`app` behind a bearer token compared in constant time: 401 (with WWW-Authenticate)
    for a request without it or with another, before the MCP server sees anything."""
    expected = token.encode()

    async def guarded(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        given = b""
        for name, value in scope.get("headers", ()):
            if name == b"authorization":
                scheme, _, rest = value.partition(b" ")
                given = rest.strip() if scheme.lower() == b"bearer" else b""
        if given and hmac.compare_digest(given, expected):
            await app(scope, receive, send)
            return
        body = json.dumps({"error": "unauthorized",
                           "message": MCP_WRONG_BEARER if given else MCP_NO_BEARER.format(
                               name=TOKEN_ENV)}).encode()
        await send({"type": "http.response.start", "status": 401, "headers": [
            (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
            (b"www-authenticate", b'Bearer realm="memrepo-mcp"')]})
        await send({"type": "http.response.body", "body": body})

    return guarded


SAME_ORIGIN_FETCH = ("same-origin", "none")  # Sec-Fetch-Site values of a request no other origin made


def _host_name(host: str) -> str:
    """The name in a Host header, without its port (IPv6 in brackets)."""
    host = host.strip()
    if host.startswith("["):
        return host[1:].partition("]")[0]
    return host.rpartition(":")[0] if host.count(":") == 1 else host


def browser_refusal(headers: dict[str, str], *, token: bool) -> tuple[int, str] | None:
    """(status, message) when a request may come from a web page on another origin, else None.
    `headers`: names in lower case. A page's request names its origin (`Origin`, and in every
    current browser `Sec-Fetch-Site`), and a page whose name was rebound to 127.0.0.1 still
    names itself in `Host`; MCP clients send neither header. Without a `token` (a server on
    loopback), the Host must be a loopback name as well."""
    host = headers.get("host", "")
    if not token and not is_loopback(_host_name(host)):
        return 421, MCP_FOREIGN_HOST.format(host=host)
    site = headers.get("sec-fetch-site")
    if site is not None and site.strip().lower() not in SAME_ORIGIN_FETCH:
        return 403, MCP_CROSS_SITE.format(why=f"Sec-Fetch-Site: {site}")
    origin = headers.get("origin")
    if origin is not None and urllib.parse.urlsplit(origin.strip()).netloc.lower() != host.strip().lower():
        return 403, MCP_CROSS_SITE.format(why=f"Origin: {origin}")
    return None


def same_origin_only(app: Asgi, *, token: bool) -> Asgi:
    """`app` behind `browser_refusal`, before the bearer check and the MCP server."""

    async def guarded(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", ())}
            refused = browser_refusal(headers, token=token)
            if refused is not None:
                body = json.dumps({"error": "forbidden", "message": refused[1]}).encode()
                await send({"type": "http.response.start", "status": refused[0], "headers": [
                    (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
                await send({"type": "http.response.body", "body": body})
                return
        await app(scope, receive, send)

    return guarded


def serve_stdio(app: MemoryServer) -> None:
    """Serve one client over standard input and output until it closes them."""
    anyio.run(_stdio, app)


async def _stdio(app: MemoryServer) -> None:
    """The SDK's stdio transport, given standard input as bounds.bounded_lines reads it: the
    lines it refuses are answered here, the others parsed by the SDK."""
    from mcp.server.stdio import stdio_server

    refusals_in, refusals = anyio.create_memory_object_stream[Exception](0)
    with bounds.claimed_stdin() as fd:
        lines: Any = bounds.bounded_lines(fd, refusals_in)
        async with stdio_server(stdin=lines) as (read_stream, write_stream), anyio.create_task_group() as tasks:
            tasks.start_soon(app.watcher.run)
            readable_in, readable = anyio.create_memory_object_stream[Any](0)
            tasks.start_soon(_answer_unreadable, read_stream, readable_in, write_stream)
            tasks.start_soon(_answer_refused, refusals, write_stream)
            server = app.server
            await server.run(readable, write_stream, server.create_initialization_options())
            tasks.cancel_scope.cancel()


async def _answer_refused(refusals: Any, answers: Any) -> None:
    """Answer each line bounds.bounded_lines refused, so a client waits for no answer forever."""
    from mcp.shared.message import SessionMessage

    async with refusals:
        async for problem in refusals:
            await answers.send(SessionMessage(bounds.refused_answer(problem)))


async def _answer_unreadable(lines: Any, readable: Any, answers: Any) -> None:
    """Pass the client's messages on to the server, and answer each line that is none (not
    JSON, nested past the parser's bound, not JSON-RPC), which the SDK's stdio reader hands on
    as an exception the server drops unanswered: a client would wait for its answer forever."""
    from mcp.shared.message import SessionMessage

    async with readable:
        async for item in lines:
            if isinstance(item, Exception):
                await answers.send(SessionMessage(unreadable_answer(item)))
            else:
                await readable.send(item)


def unreadable_answer(problem: Exception) -> types.JSONRPCError:
    """JSON-RPC's answer to a line that is not a message: a parse error when it is not JSON
    (pydantic's parser stops ~200 levels deep), else an invalid request; its id is null, as the
    line's own could not be read. Over HTTP the SDK answers the same with a 400."""
    errors = problem.errors() if isinstance(problem, ValidationError) else []
    parse = not errors or errors[0]["type"] == "json_invalid"
    detail = errors[0]["msg"] if errors else str(problem)
    return types.JSONRPCError(jsonrpc="2.0", id=None, error=types.ErrorData(
        code=types.PARSE_ERROR if parse else types.INVALID_REQUEST,
        message=texts.MCP_UNREADABLE.format(problem=detail)))


def listen(host: str, port: int) -> socket.socket:
    """A listening socket on host:port, or a one-line MemrepoError (port in use, bad host)."""
    if not 0 <= port <= 65535:
        raise MemrepoError(f"--http must be a port from 0 to 65535, found {port}")
    return sockets.listen(host, port)


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://{f'[{host}]' if ':' in host else host}:{port}{MCP_PATH}"


def serve_http(app: MemoryServer, sock: socket.socket, host: str, token: str | None = None) -> None:
    """Serve streamable HTTP at /mcp on `sock` until SIGINT or SIGTERM (uvicorn's graceful
    stop); with `token`, only to requests that carry it (see the module's docstring)."""
    import uvicorn

    token = require_token(host, token)
    starlette: Any = app.server.streamable_http_app(streamable_http_path=MCP_PATH, host=host)
    bounded = bounds.bounded_body(starlette)
    served = same_origin_only(bearer_only(bounded, token) if token is not None else bounded,
                              token=token is not None)
    config = uvicorn.Config(served, log_level="warning", access_log=False, lifespan="on")
    server = uvicorn.Server(config)
    print(MCP_SERVING_HTTP.format(root=app.root, url=url_of(sock)), file=sys.stderr, flush=True)
    anyio.run(_http, app, server, sock)


async def _http(app: MemoryServer, server: object, sock: socket.socket) -> None:
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(app.watcher.run)
        await server.serve(sockets=[sock])  # type: ignore[attr-defined]
        tasks.cancel_scope.cancel()
