"""`memrepo mcp --http` serves write tools, so off loopback it needs a bearer token: it refuses
to start without one (before binding anything), and with one it answers 401 to any request
that does not carry it."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
import requests

from bot.errors import MemrepoError
from bot.mcp.transports import is_loopback, require_token
from bot.memfs.repo import MemoryRepo
from tests.conftest import run_cli
from tests.test_mcp_transports import HttpServer, command

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


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
        assert require_token(host, "s3cret") == "s3cret"


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
    monkeypatch.setenv("MEMREPO_MCP_TOKEN", "mcp-s3cret")
    server = HttpServer(command(memory, tmp_path, "--http", "0"))
    try:
        missing = requests.post(server.url, json=INITIALIZE, headers=ACCEPT, timeout=10)
        assert missing.status_code == 401 and missing.headers["WWW-Authenticate"].startswith("Bearer")
        assert "MEMREPO_MCP_TOKEN" in missing.json()["message"]
        wrong = requests.post(server.url, json=INITIALIZE, headers={**ACCEPT, "Authorization": "Bearer nope"},
                              timeout=10)
        assert wrong.status_code == 401
        right = requests.post(server.url, json=INITIALIZE, timeout=10,
                              headers={**ACCEPT, "Authorization": "Bearer mcp-s3cret"})
        assert right.status_code == 200, right.text
    finally:
        server.stop()
