"""What the webhook receiver's tests send and read: its settings, deliveries signed as GitHub
signs them, the payloads of the events memrepo acts on, the jobs queued, and a Flask app on a
real port. The fixtures built from them are in tests/webhooks/conftest.py."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import uuid
from typing import Any

import redis
from flask import Flask
from flask.testing import FlaskClient
from rq.job import Job
from werkzeug.serving import BaseWSGIServer, make_server

from bot.queue import get_queue
from bot.settings import Settings

SECRET = "It's a Secret to Everybody"
TOKEN = "agent-token-0123456789"
BOT = "memrepo-integrator[bot]"
REPO = "alice/memory"
SHA1 = "1" * 40
SHA2 = "2" * 40
ZERO = "0" * 40


def make_settings(redis_url: str, **changes: Any) -> Settings:
    fields: dict[str, Any] = {"redis_url": redis_url, "webhook_secret": SECRET, "agent_token": TOKEN,
                              "repos": frozenset({REPO, "alice/notes"}), "bot_login": BOT, "heartbeat_seconds": 0.2}
    fields.update(changes)
    return Settings(**fields)


def sign(body: bytes, secret: str = SECRET) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def repository(full_name: str = REPO) -> dict[str, Any]:
    return {"full_name": full_name, "default_branch": "main"}


def pull_request(action: str = "opened", number: int = 12, repo: str = REPO, sender: str = "alice") -> dict[str, Any]:
    return {"action": action, "number": number, "pull_request": {"number": number}, "repository": repository(repo),
            "sender": {"login": sender}}


def push(ref: str = "refs/heads/main", before: str = SHA1, after: str = SHA2, sender: str = "bob") -> dict[str, Any]:
    return {"ref": ref, "before": before, "after": after, "deleted": after == ZERO, "repository": repository(),
            "sender": {"login": sender}}


def status(sender: str = BOT, sha: str = SHA2) -> dict[str, Any]:
    return {"sha": sha, "state": "success", "context": "memrepo/validate", "repository": repository(),
            "sender": {"login": sender}}


def deliver(client: FlaskClient, event: str, payload: Any, *, guid: str | None = None, body: bytes | None = None,
            secret: str = SECRET, headers: dict[str, str | None] | None = None) -> Any:
    """POST a delivery as GitHub sends it (JSON, signed); `headers` values of None drop one."""
    data = body if body is not None else json.dumps(payload).encode()
    sent: dict[str, str | None] = {"Content-Type": "application/json", "X-GitHub-Event": event,
                                   "X-GitHub-Delivery": guid or str(uuid.uuid4()),
                                   "X-Hub-Signature-256": sign(data, secret), "User-Agent": "GitHub-Hookshot/test"}
    sent.update(headers or {})
    return client.post("/webhooks/github", data=data, headers={k: v for k, v in sent.items() if v is not None})


def queued(client: redis.Redis) -> list[Job]:
    return get_queue(client).get_jobs()


class Served:
    """A Flask app on a real, threaded werkzeug server on a free loopback port."""

    def __init__(self, app: Flask) -> None:
        self.server: BaseWSGIServer = make_server("127.0.0.1", 0, app, threaded=True)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05},
                                       daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)
