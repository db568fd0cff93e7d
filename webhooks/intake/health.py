"""`GET /healthz`: Redis answers, how many jobs wait and how many event streams this process
holds, for load balancers and people."""

from __future__ import annotations

from flask import Blueprint, Response
from redis.exceptions import RedisError

from bot.queue import queue_depths
from webhooks import texts
from webhooks.intake.context import answer, context

bp = Blueprint("health", __name__)


@bp.get("/healthz")
def healthz() -> Response:
    ctx = context()
    redis = ctx.redis
    try:
        redis.ping()
        depths = queue_depths(redis)
    except RedisError as exc:
        return answer(503, texts.REDIS_UNAVAILABLE.format(error=type(exc).__name__), redis="unreachable")
    extra = {"streams": ctx.streams()} if ctx.streams is not None else {}
    return answer(200, "ok", redis="ok", queues=depths, **extra)
