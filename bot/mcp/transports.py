"""Running a MemoryServer on a transport: stdio (the client started us; standard output
carries nothing but protocol) or streamable HTTP (uvicorn on a socket bound here, so a port in
use is one clear error before anything starts). Either way the HEAD watcher runs beside it."""

from __future__ import annotations

import logging
import socket
import sys

import anyio

from bot import messages
from bot.errors import MemrepoError
from bot.mcp.server import MemoryServer

log = logging.getLogger("memrepo.mcp")

MCP_PATH = "/mcp"


def serve_stdio(app: MemoryServer) -> None:
    """Serve one client over standard input and output until it closes them."""
    anyio.run(_stdio, app)


async def _stdio(app: MemoryServer) -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read_stream, write_stream), anyio.create_task_group() as tasks:
        tasks.start_soon(app.watcher.run)
        server = app.server
        await server.run(read_stream, write_stream, server.create_initialization_options())
        tasks.cancel_scope.cancel()


def listen(host: str, port: int) -> socket.socket:
    """A listening socket on host:port, or a one-line MemrepoError (port in use, bad host)."""
    if not 0 <= port <= 65535:
        raise MemrepoError(messages.MCP_BAD_PORT.format(port=port))
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise MemrepoError(messages.MCP_CANNOT_BIND.format(host=host, port=port, error=exc.strerror or exc)) from None
    family, _, _, _, address = infos[0]
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise MemrepoError(messages.MCP_CANNOT_BIND.format(host=host, port=port, error=exc.strerror or exc)) from None
    return sock


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://{f'[{host}]' if ':' in host else host}:{port}{MCP_PATH}"


def serve_http(app: MemoryServer, sock: socket.socket, host: str) -> None:
    """Serve streamable HTTP at /mcp on `sock` until SIGINT or SIGTERM (uvicorn's graceful stop)."""
    import uvicorn

    starlette = app.server.streamable_http_app(streamable_http_path=MCP_PATH, host=host)
    config = uvicorn.Config(starlette, log_level="warning", access_log=False, lifespan="on")
    server = uvicorn.Server(config)
    print(messages.MCP_SERVING_HTTP.format(root=app.root, url=url_of(sock)), file=sys.stderr, flush=True)
    anyio.run(_http, app, server, sock)


async def _http(app: MemoryServer, server: object, sock: socket.socket) -> None:
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(app.watcher.run)
        await server.serve(sockets=[sock])  # type: ignore[attr-defined]
        tasks.cancel_scope.cancel()
