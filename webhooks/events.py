"""`GET /v1/repos/<owner>/<repo>/events`: server-sent events telling agents that `main` moved.

Each head event (DESIGN.md §9) is sent as `event: head`, `id: <sha>`, `data: <json>`; a
`: keepalive` comment goes out whenever nothing was sent for the heartbeat interval, so
proxies and load balancers keep idle connections open.

Reconnection (`Last-Event-ID`): the head is a state, not a log, so what a reconnecting agent
needs is only the newest head. When the id it last saw is not the newest sha, the newest
event is sent first; otherwise the stream starts with what happens next. The subscription is
made before anything is read or sent, so no event can fall between connecting and listening.
"""

from __future__ import annotations

import hmac
import logging
from collections.abc import Iterator

from flask import Blueprint, Response, request
from redis.exceptions import RedisError

from bot import messages
from bot.notify.events import HeadEvent, last_head, subscribe
from bot.settings import is_repo_name
from webhooks.context import answer, context

log = logging.getLogger("memrepo.webhooks.events")

bp = Blueprint("events", __name__)

RETRY_MS = 3000  # how long EventSource clients wait before reconnecting


def format_event(event: HeadEvent) -> str:
    return f"event: head\nid: {event.sha}\ndata: {event.to_json()}\n\n"


def _unauthorized(message: str) -> Response:
    resp = answer(401, message)
    resp.headers["WWW-Authenticate"] = 'Bearer realm="memrepo"'
    return resp


@bp.get("/v1/repos/<owner>/<name>/events")
def head_events(owner: str, name: str) -> Response:
    ctx = context()
    settings = ctx.settings
    scheme, _, token = (request.headers.get("Authorization") or "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return _unauthorized(messages.EVENTS_NO_TOKEN)
    if not hmac.compare_digest(token.strip().encode(), settings.agent_token.encode()):
        return _unauthorized(messages.EVENTS_BAD_TOKEN)
    repo = f"{owner}/{name}"
    if not is_repo_name(repo) or not settings.accepts(repo):
        return answer(404, messages.EVENTS_UNKNOWN_REPO.format(repo=repo))
    subscription = subscribe(ctx.redis, repo)  # a RedisError here is the app's 503
    try:
        seen = (request.headers.get("Last-Event-ID") or "").strip().lower()
        newest = last_head(ctx.redis, repo) if seen else None
    except RedisError:
        subscription.close()
        raise
    catch_up = newest if newest is not None and newest.sha != seen else None
    heartbeat = settings.heartbeat_seconds

    def stream() -> Iterator[str]:
        try:
            yield f"retry: {RETRY_MS}\n: connected to {repo}\n\n"
            if catch_up is not None:
                yield format_event(catch_up)
            while True:
                try:
                    event = subscription.get(timeout=heartbeat)
                except RedisError as exc:  # Redis went away: end the stream; the client reconnects
                    log.warning("event stream for %s ends: %s", repo, exc)
                    return
                yield format_event(event) if event is not None else ": keepalive\n\n"
        finally:
            subscription.close()

    return Response(stream(), status=200, mimetype="text/event-stream",
                    headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
