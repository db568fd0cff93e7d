"""`GET /healthz`: Redis answers and how many jobs wait, for load balancers and people."""

from __future__ import annotations

from flask import Blueprint, Response
from redis.exceptions import RedisError

from bot import messages
from bot.queue import queue_depths
from webhooks.context import answer, context

bp = Blueprint("health", __name__)


@bp.get("/healthz")
def healthz() -> Response:
    redis = context().redis
    try:
        redis.ping()
        depths = queue_depths(redis)
    except RedisError as exc:
        return answer(503, messages.REDIS_UNAVAILABLE.format(error=type(exc).__name__), redis="unreachable")
    return answer(200, messages.HEALTH_OK, redis="ok", queues=depths)
