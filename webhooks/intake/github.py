"""`POST /webhooks/github`: verify, de-duplicate, enqueue (or publish), answer.

Order of the checks: size (413) before reading, signature (401) before anything is parsed or
stored, then headers, JSON (webhooks/intake/payload.py: nesting bounded before it is parsed) and the
numbers it names (webhooks/intake/routing.py) (400); only a signed, well-formed delivery touches Redis.
Nothing here calls git or GitHub, so an answer takes milliseconds. A delivery whose first action
is an enqueue costs one Redis round trip when the job is already pending: the de-duplication
SET NX (bot/dedupe.py) runs inside the collapsing enqueue's script (bot/queue.py).
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import re
from typing import Any

from flask import Blueprint, Response, request
from redis import Redis
from redis.exceptions import RedisError

from bot.dedupe import forget_delivery, remember_delivery
from bot.integrator.permissions import forget as forget_permissions
from bot.notify.events import HeadEvent
from bot.notify.publisher import publish_head
from bot.queue import enqueue_integrate, enqueue_integrate_commit, enqueue_reconcile
from webhooks import texts
from webhooks.intake.context import answer, context
from webhooks.intake.payload import PayloadError, parse_payload
from webhooks.intake.routing import (
    Action,
    BadPayload,
    ForgetPermissions,
    Integrate,
    IntegrateCommit,
    PublishHead,
    Reconcile,
    route,
)

WEBHOOK_DUPLICATE = "duplicate delivery {delivery}: it was accepted before, so nothing is enqueued again"

log = logging.getLogger("memrepo.receiver")

bp = Blueprint("github", __name__)

SIGNATURE = "X-Hub-Signature-256"
EVENT = "X-GitHub-Event"
DELIVERY = "X-GitHub-Delivery"
TOKEN = re.compile(r"[A-Za-z0-9._:-]{1,200}")  # event names and delivery GUIDs, matched whole


def signature_ok(secret: str, body: bytes, header: str) -> bool:
    """GitHub's HMAC-SHA256 of the exact body bytes, compared in constant time."""
    expected = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected.encode(), header.strip().encode("utf-8", "replace"))


@bp.post("/webhooks/github")
def receive() -> Response:
    ctx = context()
    settings = ctx.settings
    if request.content_length is not None and request.content_length > settings.max_body_bytes:
        return answer(413, texts.WEBHOOK_TOO_LARGE.format(limit=settings.max_body_bytes))
    body = request.get_data(cache=False)
    if len(body) > settings.max_body_bytes:  # a chunked body, cut one byte past the limit
        return answer(413, texts.WEBHOOK_TOO_LARGE.format(limit=settings.max_body_bytes))
    signature = request.headers.get(SIGNATURE)
    if not signature:
        return answer(401, "no X-Hub-Signature-256 header: give the webhook the receiver's secret")
    if not signature_ok(settings.webhook_secret, body, signature):
        return answer(401, "X-Hub-Signature-256 does not match the body: the webhook's secret is not the receiver's")
    for header in (EVENT, DELIVERY):
        value = request.headers.get(header)
        if not value:
            return answer(400, f"no {header} header; this endpoint receives GitHub webhooks only")
        if not TOKEN.fullmatch(value):
            return answer(400, f"the {header} header is not valid")
    event, guid = request.headers[EVENT], request.headers[DELIVERY]
    try:
        payload = parse_payload(body, request.content_type or "")
    except PayloadError as exc:
        return answer(400, str(exc))
    if event == "ping":
        return answer(200, "pong: memrepo's webhook receiver is listening", zen=payload.get("zen"))
    try:
        routed = route(event, payload, settings)
    except BadPayload as exc:
        return answer(400, str(exc))
    if not routed.actions:
        log.info("delivery %s (%s): %s", guid, event, routed.ignored)
        return answer(202, routed.ignored or "", delivery=guid)
    redis = ctx.redis
    seen = (guid, settings.delivery_ttl_seconds)
    first, *rest = routed.actions
    if not isinstance(first, (Integrate, IntegrateCommit, Reconcile)):  # a publish: remember on its own
        if not remember_delivery(redis, guid, settings.delivery_ttl_seconds):
            return _duplicate(guid, event)
        seen = None
    try:
        # The usual delivery (one enqueue) is one Redis round trip: the enqueue script first
        # remembers the GUID (SET NX) and stops there when it was seen already.
        done = [_perform(redis, first, seen)]
        if done[0].get("outcome") == "duplicate":
            return _duplicate(guid, event)
        done += [_perform(redis, item) for item in rest]
    except RedisError:
        try:  # let a redelivery of this GUID in, since it was not (fully) handled
            forget_delivery(redis, guid)
        except RedisError:
            log.warning("delivery %s: could not forget it; a redelivery will be taken for a duplicate", guid)
        raise
    log.info("delivery %s (%s %s): %s", guid, event, payload.get("action") or "", done)
    return answer(202, "accepted", delivery=guid, done=done)


def _duplicate(guid: str, event: str) -> Response:
    log.info("delivery %s (%s): duplicate", guid, event)
    return answer(200, WEBHOOK_DUPLICATE.format(delivery=guid), delivery=guid, duplicate=True)


def _perform(redis: Redis, item: Action, delivery: tuple[str, int] | None = None) -> dict[str, Any]:
    """Do one action (an enqueue or a publish: a few Redis round trips) and describe it.
    `delivery=(guid, ttl)`, enqueues only: remember the GUID in the same script first
    (outcome `duplicate` when it was seen already)."""
    if isinstance(item, Integrate):
        result = enqueue_integrate(redis, item.repo, item.number, delivery=delivery)
        return {"job": result.job_id, "outcome": result.outcome}
    if isinstance(item, IntegrateCommit):
        result = enqueue_integrate_commit(redis, item.repo, item.sha, delivery=delivery)
        return {"job": result.job_id, "outcome": result.outcome}
    if isinstance(item, Reconcile):
        result = enqueue_reconcile(redis, item.repo, delivery=delivery)
        return {"job": result.job_id, "outcome": result.outcome}
    if isinstance(item, PublishHead):
        head = HeadEvent(repo=item.repo, sha=item.after, before=item.before, cause="push")
        receivers = publish_head(redis, head)
        return {"published": head.sha, "receivers": receivers}
    if isinstance(item, ForgetPermissions):
        return {"forgotten": forget_permissions(redis, item.owner, item.repo)}
    raise TypeError(f"unknown action {item!r}")
