"""`memrepo serve` (production: gunicorn, uvicorn's worker class) with more idle event streams
open than its request threads: 40 made the thread-per-stream receiver (2 x 16 threads) deaf to
GitHub. Here 100 are open, and a webhook delivery and /healthz are still answered."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import requests

from tests.event_stream_client import open_streams
from tests.waiting import wait_until


def test_production_serve_answers_webhooks_with_a_hundred_idle_streams_open(redis_url: str, tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMREPO_")}
    env.update({"REDIS_URL": redis_url, "MEMREPO_WEBHOOK_SECRET": "s", "MEMREPO_AGENT_TOKEN": "operator"})
    err = (tmp_path / "serve.err").open("w")
    proc = subprocess.Popen([sys.executable, "-m", "bot.cli", "serve", "--port", str(port), "--threads", "4"],
                            env=env, stdout=subprocess.DEVNULL, stderr=err)
    url = f"http://127.0.0.1:{port}"

    def up() -> bool:
        try:
            return requests.get(f"{url}/healthz", timeout=2).status_code == 200
        except requests.RequestException:
            return False

    try:
        wait_until(up, 30, lambda: "serve to answer: " + (tmp_path / "serve.err").read_text()[-2000:])
        streams = open_streams("127.0.0.1", port, "acme/memory", "operator", 100)
        try:
            assert len(streams) == 100
            assert requests.get(f"{url}/healthz", timeout=10).status_code == 200
            unsigned = requests.post(f"{url}/webhooks/github", data=b"{}", timeout=10)
            assert unsigned.status_code == 401  # answered (and refused: no signature), not timed out
        finally:
            for stream in streams:
                stream.close()
    finally:
        proc.terminate()
        assert proc.wait(timeout=30) == 0
