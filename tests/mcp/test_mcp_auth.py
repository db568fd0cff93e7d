"""`memrepo mcp --http` serves write tools, so off loopback it needs a bearer token of at least 16
characters (the palace's rule, bot/bearer.py): it refuses to start without one or with a shorter
one (before binding anything), and with one it answers 401 to any request that does not carry it."""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

import pytest
import requests

from bot.bearer import is_loopback
from bot.errors import MemrepoError
from bot.mcp.transports import MCP_TOKEN_SHORT, require_token
from bot.memfs.store.repo import MemoryRepo
from bot.palace import gate
from tests.conftest import run_cli
from tests.mcp.test_mcp_transports import TIMEOUT, HttpServer, command

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
LONG_ENOUGH = "s3cret-of-16-chr"


@pytest.mark.parametrize(("host", "loopback"), [
    ("127.0.0.1", True), ("127.1.2.3", True), ("::1", True), ("[::1]", True), ("localhost", True),
    ("0.0.0.0", False), ("::", False), ("192.0.2.7", False), ("example.org", False)])
def test_which_addresses_are_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback
    if loopback:
        assert require_token(host, None) is None
    else:
        with pytest.raises(MemrepoError, match="MEMREPO_MCP_TOKEN"):
            require_token(host, "  ")
        assert require_token(host, LONG_ENOUGH) == LONG_ENOUGH


@pytest.mark.parametrize(("host", "token", "required", "problem"), [
    ("127.0.0.1", None, None, None),
    ("::1", " ", None, None),
    ("127.0.0.1", LONG_ENOUGH, LONG_ENOUGH, None),
    ("0.0.0.0", None, None, "set a bearer token in MEMREPO_MCP_TOKEN"),
    ("0.0.0.0", "x", None, "MEMREPO_MCP_TOKEN is too short: use at least 16 characters"),
    ("192.0.2.7", LONG_ENOUGH[:-1], None, "MEMREPO_MCP_TOKEN is too short: use at least 16 characters"),
    ("0.0.0.0", f"  {LONG_ENOUGH}  ", LONG_ENOUGH, None),
    ("127.0.0.1", "short", None, "MEMREPO_MCP_TOKEN is too short"),  # the palace's rule: any token given
])
def test_the_token_rule_is_the_palaces(host: str, token: str | None, required: str | None,
                                       problem: str | None) -> None:
    if problem is None:
        assert require_token(host, token) == required
        assert gate.check_start(host, token) == required
    else:
        with pytest.raises(MemrepoError, match=problem):
            require_token(host, token)
        with pytest.raises(MemrepoError):
            gate.check_start(host, token)


def test_off_loopback_a_short_token_refuses_to_start_and_binds_nothing(memory: MemoryRepo, tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    try:  # a server that starts serves until stopped: the timeout ends it
        done = subprocess.run([*command(memory, tmp_path, "--http", str(port), "--host", "0.0.0.0")],
                              env={**os.environ, "MEMREPO_MCP_TOKEN": "x"}, capture_output=True, text=True,
                              timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        pytest.fail("memrepo mcp started on 0.0.0.0 with a one-character token")
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == f"memrepo: {MCP_TOKEN_SHORT.format(name='MEMREPO_MCP_TOKEN', minimum=16)}\n"
    with socket.socket() as again:
        again.bind(("0.0.0.0", port))  # nothing holds the port


def test_off_loopback_without_a_token_it_refuses_to_start_and_binds_nothing(
        memory: MemoryRepo, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMREPO_MCP_TOKEN", raising=False)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    code, out, err = run_cli(capsys, "mcp", "--repo", str(memory.root), "--http", str(port), "--host", "0.0.0.0")
    assert code == 1 and out == ""
    assert err.startswith("memrepo: memrepo mcp --http on 0.0.0.0 would let anyone") and err.count("\n") == 1
    with socket.socket() as again:
        again.bind(("0.0.0.0", port))  # nothing holds the port


def test_with_a_token_every_request_must_carry_it(memory: MemoryRepo, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMREPO_MCP_TOKEN", LONG_ENOUGH)
    server = HttpServer(command(memory, tmp_path, "--http", "0"))
    try:
        missing = requests.post(server.url, json=INITIALIZE, headers=ACCEPT, timeout=10)
        assert missing.status_code == 401 and missing.headers["WWW-Authenticate"].startswith("Bearer")
        assert "MEMREPO_MCP_TOKEN" in missing.json()["message"]
        wrong = requests.post(server.url, json=INITIALIZE, headers={**ACCEPT, "Authorization": "Bearer nope"},
                              timeout=10)
        assert wrong.status_code == 401
        right = requests.post(server.url, json=INITIALIZE, timeout=10,
                              headers={**ACCEPT, "Authorization": f"Bearer {LONG_ENOUGH}"})
        assert right.status_code == 200, right.text
    finally:
        server.stop()
