"""Delivering events to repository webhooks, as GitHub's hookshot does, plus localhub's
delivery controls for tests (`/_localhub/delivery`, `/_localhub/deliveries`).

Every hub event is matched against the repository's active hooks; for each match the payload
is built at once (it shows the state at the time of the event) and a delivery row is
recorded, then a single worker thread sends it, so the request that caused the event never
waits on a receiver. Each hook gets its own `X-GitHub-Delivery` GUID per event; a redelivery
keeps the GUID and says `redelivery: true`.

Delivery modes let tests play the network's tricks on a receiver: `drop` (recorded as failed,
never sent), `duplicate` (sent twice with one GUID), `reverse` (held `delay_ms`, then sent
newest first); `delay_ms` in `normal` mode delays each send.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import queue
import threading
import time
import uuid
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import requests
from flask import Blueprint, Flask, current_app, jsonify, request
from flask.blueprints import BlueprintSetupState
from flask.typing import ResponseReturnValue

from localhub import messages, payloads, shapes
from localhub.errors import ApiError, json_body
from localhub.hub import EXTENSION as HUB
from localhub.hub import Event, Hub, current_hub
from localhub.store import dumps, now

log = logging.getLogger("localhub.webhooks")

EXTENSION = "localhub.webhooks"
TIMEOUT = 10.0  # seconds; GitHub gives a receiver 10 s
WAIT_LIMIT = 10.0  # longest `GET /_localhub/deliveries?wait=1` blocks
DEFAULT_REVERSE_HOLD_MS = 200
MODES = ("normal", "drop", "duplicate", "reverse")
RESPONSE_BODY_LIMIT = 64 * 1024
USER_AGENT = "GitHub-Hookshot/localhub"


@dataclass
class _Job:
    delivery_id: int


def signature_headers(secret: str | None, body: bytes) -> dict[str, str]:
    """GitHub's signatures of the exact body bytes: `X-Hub-Signature-256` and the legacy SHA-1."""
    if not secret:
        return {}
    key = secret.encode()
    return {"X-Hub-Signature": "sha1=" + hmac.new(key, body, hashlib.sha1).hexdigest(),
            "X-Hub-Signature-256": "sha256=" + hmac.new(key, body, hashlib.sha256).hexdigest()}


def encode(config: dict[str, Any], payload_text: str) -> tuple[bytes, str]:
    """(body, content type) as the hook asked: JSON, or a form with the JSON in `payload`."""
    if config.get("content_type") == "json":
        return payload_text.encode(), "application/json"
    return urlencode({"payload": payload_text}).encode(), "application/x-www-form-urlencoded"


class Deliverer:
    """Queues deliveries and sends them from one background thread."""

    def __init__(self, hub: Hub) -> None:
        self.hub = hub
        self.mode = "normal"
        self.delay_ms = 0
        self.timeout = TIMEOUT
        self._queue: queue.Queue[_Job | None] = queue.Queue()
        self._idle = threading.Condition()
        self._pending = 0
        self._thread = threading.Thread(target=self._run, name="localhub-webhooks", daemon=True)
        self._thread.start()
        hub.subscribe(self.on_event)
        hub.on_close.append(self.stop)

    # ------------------------------------------------------------------ producing
    def on_event(self, event: Event) -> None:
        """A hub event: one delivery per active hook of the repository that wants it. Never
        raises into the request that emitted the event."""
        try:
            hooks = [h for h in self.hub.store.all("SELECT * FROM hooks WHERE repo_id = ? AND active = 1 ORDER BY id",
                                                   event.repo_id)
                     if self._wants(h, event.name)]
            if not hooks:
                return
            payload = payloads.build(self.hub, event)
            if payload is None:
                return
            text = json.dumps(payload, separators=(",", ":"))
            for hook in hooks:
                self.enqueue(hook, event.name, event.action, text)
        except Exception:  # a webhook problem must not fail the API call that caused it
            log.exception("localhub: cannot deliver %s event", event.name)

    @staticmethod
    def _wants(hook: Any, name: str) -> bool:
        events = json.loads(hook["events"])
        return "*" in events or name in events

    def ping(self, hook: Any, sender_id: int) -> None:
        text = json.dumps(payloads.ping(self.hub, hook, sender_id), separators=(",", ":"))
        self.enqueue(hook, "ping", None, text)

    def test_push(self, hook: Any, sender_id: int) -> None:
        """`POST /hooks/{id}/tests`: the latest push to the default branch, sent to this hook."""
        repo = self.hub.repo_by_id(hook["repo_id"])
        ref = f"refs/heads/{repo['default_branch']}"
        git = self.hub.git(repo)
        if not self._wants(hook, "push") or ref not in git.references:
            return
        head = git.references[ref].peel()
        before = str(head.parent_ids[0]) if head.parent_ids else None
        payload = payloads.push(self.hub, repo, ref, before, str(head.id), sender_id)
        self.enqueue(hook, "push", None, json.dumps(payload, separators=(",", ":")))

    def enqueue(self, hook: Any, event: str, action: str | None, payload_text: str, *,
                guid: str | None = None, redelivery: bool = False) -> int:
        """Record a pending delivery of `payload_text` to `hook` and queue it for sending."""
        with self.hub.store.tx() as db:
            delivery_id = self.hub.store.next_id(db, "delivery", 90_000_001)
            db.execute("INSERT INTO deliveries (id, guid, hook_id, repo_id, event, action, payload, redelivery, "
                       "status, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                       (delivery_id, guid or str(uuid.uuid4()), hook["id"], hook["repo_id"], event, action,
                        payload_text, int(redelivery), messages.DELIVERY_PENDING, now()))
        with self._idle:
            self._pending += 1
        self._queue.put(_Job(delivery_id))
        return delivery_id

    def redeliver(self, delivery: Any) -> int:
        hook = self.hub.store.one("SELECT * FROM hooks WHERE id = ?", delivery["hook_id"])
        return self.enqueue(hook, delivery["event"], delivery["action"], delivery["payload"],
                            guid=delivery["guid"], redelivery=True)

    # ------------------------------------------------------------------ waiting and stopping
    @property
    def idle(self) -> bool:
        with self._idle:
            return self._pending == 0

    def wait_idle(self, timeout: float = WAIT_LIMIT) -> bool:
        """Block until every queued delivery has been handled; False if `timeout` passed first."""
        with self._idle:
            return self._idle.wait_for(lambda: self._pending == 0, timeout)

    def stop(self) -> None:
        self._queue.put(None)
        self._thread.join(timeout=2)

    # ------------------------------------------------------------------ the worker
    def _run(self) -> None:
        try:
            stopping = False
            while not stopping:
                job = self._queue.get()
                if job is None:
                    break
                batch = [job]
                if self.mode == "reverse":
                    deadline = time.monotonic() + (self.delay_ms or DEFAULT_REVERSE_HOLD_MS) / 1000
                    while (remaining := deadline - time.monotonic()) > 0:
                        try:
                            more = self._queue.get(timeout=remaining)
                        except queue.Empty:
                            break
                        if more is None:
                            stopping = True
                            break
                        batch.append(more)
                    batch.reverse()
                for item in batch:
                    try:
                        self._process(item)
                    except Exception:
                        log.exception("localhub: delivery %s failed", item.delivery_id)
                    finally:
                        with self._idle:
                            self._pending -= 1
                            self._idle.notify_all()
        finally:
            self.hub.store.close()  # this thread's connection

    def _process(self, job: _Job) -> None:
        # Read under the store's write lock: an event emitted inside a caller's transaction
        # queues its delivery before that transaction commits, and this waits for the commit.
        with self.hub.store.tx() as db:
            row = db.execute("SELECT * FROM deliveries WHERE id = ?", (job.delivery_id,)).fetchone()
            hook = db.execute("SELECT * FROM hooks WHERE id = ?", (row["hook_id"],)).fetchone() if row else None
        if row is None or hook is None:  # the hook was deleted meanwhile
            return
        config = json.loads(hook["config"])
        body, content_type = encode(config, row["payload"])
        headers = {
            "Accept": "*/*",
            "Content-Type": content_type,
            "User-Agent": USER_AGENT,
            "X-GitHub-Delivery": row["guid"],
            "X-GitHub-Event": row["event"],
            "X-GitHub-Hook-ID": str(hook["id"]),
            "X-GitHub-Hook-Installation-Target-ID": str(hook["repo_id"]),
            "X-GitHub-Hook-Installation-Target-Type": "repository",
            **signature_headers(config.get("secret"), body),
        }
        if self.mode == "drop":
            self._record(row["id"], headers, 0, messages.DELIVERY_DROPPED, 0.0, None, None)
            return
        if self.mode == "normal" and self.delay_ms:
            time.sleep(self.delay_ms / 1000)
        self._send(row["id"], config["url"], body, headers)
        if self.mode == "duplicate":
            with self.hub.store.tx() as db:
                copy_id = self.hub.store.next_id(db, "delivery", 90_000_001)
                db.execute("INSERT INTO deliveries (id, guid, hook_id, repo_id, event, action, payload, redelivery, "
                           "status, created_at) SELECT ?, guid, hook_id, repo_id, event, action, payload, redelivery, "
                           "?, ? FROM deliveries WHERE id = ?", (copy_id, messages.DELIVERY_PENDING, now(), row["id"]))
            self._send(copy_id, config["url"], body, headers)

    def _send(self, delivery_id: int, url: str, body: bytes, headers: dict[str, str]) -> None:
        started = time.monotonic()
        try:
            resp = requests.post(url, data=body, headers=headers, timeout=self.timeout, allow_redirects=False)
        except requests.Timeout:
            self._record(delivery_id, headers, 0, messages.DELIVERY_TIMEOUT, time.monotonic() - started, None, None)
            return
        except requests.RequestException:
            self._record(delivery_id, headers, 0, messages.DELIVERY_NO_CONNECTION, time.monotonic() - started,
                         None, None)
            return
        status = messages.DELIVERY_OK if 200 <= resp.status_code < 300 \
            else messages.DELIVERY_HTTP.format(code=resp.status_code)
        self._record(delivery_id, headers, resp.status_code, status, time.monotonic() - started,
                     dict(resp.headers), resp.text[:RESPONSE_BODY_LIMIT])

    def _record(self, delivery_id: int, headers: dict[str, str], code: int, status: str, duration: float,
                response_headers: dict[str, str] | None, response_body: str | None) -> None:
        with self.hub.store.tx() as db:
            db.execute("UPDATE deliveries SET status_code = ?, status = ?, duration = ?, delivered_at = ?, "
                       "request_headers = ?, response_headers = ?, response_body = ? WHERE id = ?",
                       (code, status, duration, now(), dumps(headers),
                        dumps(response_headers) if response_headers is not None else None, response_body,
                        delivery_id))


def deliverer(app: Flask | None = None) -> Deliverer:
    """The app's Deliverer (rest_hooks uses it for pings, tests and redeliveries)."""
    return (app or current_app).extensions[EXTENSION]  # type: ignore[no-any-return]


bp = Blueprint("localhub_webhooks", __name__, url_prefix="/_localhub")


@bp.record_once
def start_delivering(state: BlueprintSetupState) -> None:
    """Each app gets its own delivery worker, listening to its own hub from the moment the
    blueprint is registered (create_app registers this one before any other listener, so a
    push is delivered before the events it causes)."""
    state.app.extensions[EXTENSION] = Deliverer(state.app.extensions[HUB])


def settings(worker: Deliverer) -> dict[str, Any]:
    return {"mode": worker.mode, "delay_ms": worker.delay_ms, "timeout_ms": int(worker.timeout * 1000)}


@bp.get("/delivery")
def get_mode() -> ResponseReturnValue:
    return jsonify(settings(deliverer()))


@bp.post("/delivery")
def set_mode() -> ResponseReturnValue:
    worker = deliverer()
    body = json_body()
    mode = body.get("mode", worker.mode)
    if mode not in MODES:
        raise ApiError(422, messages.DELIVERY_BAD_MODE)
    for key in ("delay_ms", "timeout_ms"):
        value = body.get(key)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
            raise ApiError(422, messages.DELIVERY_NOT_MILLISECONDS.format(key=key))
    worker.mode = mode
    worker.delay_ms = int(body.get("delay_ms", 0))
    worker.timeout = int(body.get("timeout_ms", TIMEOUT * 1000)) / 1000
    return jsonify(settings(worker))


@bp.get("/deliveries")
def list_deliveries() -> ResponseReturnValue:
    """Every delivery, oldest first; `?wait=1` first waits (up to 10 s) until the queue is
    drained, so tests need not poll."""
    hub = current_hub()
    worker = deliverer()
    idle = worker.wait_idle() if request.args.get("wait") not in (None, "", "0") else worker.idle
    rows = hub.store.all("SELECT * FROM deliveries ORDER BY id")
    resp = jsonify([{
        "id": row["id"], "guid": row["guid"], "hook_id": row["hook_id"], "event": row["event"],
        "action": row["action"], "status": row["status"], "status_code": row["status_code"],
        "redelivery": bool(row["redelivery"]), "delivered_at": shapes.timestamp(row["delivered_at"]),
    } for row in rows])
    resp.headers["X-Localhub-Idle"] = "true" if idle else "false"
    return resp
