"""The receiver's intake: GitHub webhooks (`POST /webhooks/github`) and `GET /healthz`.

The intake never does work inline: it verifies, de-duplicates (bot/dedupe.py), enqueues
(bot/queue.py) or publishes (bot/notify/publisher.py) and answers, so GitHub's 10-second limit
is never in question.

`create_app` is the Flask application of the webhook intake and health; the whole receiver,
event streams included, is `webhooks.asgi.Receiver`, which calls this app on a thread pool of
its own and serves the streams on its event loop (webhooks/streams/endpoint.py).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from flask import Flask, Response
from redis import Redis
from redis.exceptions import RedisError
from werkzeug.exceptions import RequestEntityTooLarge

from bot.queue import connect
from bot.settings import Settings
from webhooks import texts
from webhooks.intake.context import EXTENSION, Context, answer

log = logging.getLogger("memrepo.receiver")

RETRY_AFTER_SECONDS = 5


def create_app(settings: Settings | None = None, *, redis: Redis | None = None,
               streams: Callable[[], int] | None = None) -> Flask:
    """The receiver's Flask app (webhook intake and health). Settings default to the
    environment (a missing variable is a MemrepoError naming it, at start-up rather than on
    the first delivery). `streams`: how many event streams the process holds, for /healthz."""
    from webhooks.intake import github, health

    settings = settings or Settings.from_env()
    app = Flask(__name__)
    # One byte over the limit: a chunked body (no Content-Length) is cut there, and a body that
    # reaches it is known to be too large (webhooks/intake/github.py checks the length it read).
    app.config["MAX_CONTENT_LENGTH"] = settings.max_body_bytes + 1
    app.extensions[EXTENSION] = Context(settings=settings, redis=redis or connect(settings.redis_url),
                                        streams=streams)
    app.register_blueprint(github.bp)
    app.register_blueprint(health.bp)

    @app.errorhandler(RequestEntityTooLarge)
    def too_large(_: RequestEntityTooLarge) -> Response:
        return answer(413, texts.WEBHOOK_TOO_LARGE.format(limit=settings.max_body_bytes))

    @app.errorhandler(RedisError)
    def redis_down(exc: RedisError) -> Response:
        """Redis down or restarting: a clear 503 (GitHub records the failed delivery, which
        can be redelivered), never a traceback."""
        log.warning("Redis error: %s", exc)
        resp = answer(503, texts.REDIS_UNAVAILABLE.format(error=type(exc).__name__))
        resp.headers["Retry-After"] = str(RETRY_AFTER_SECONDS)
        return resp

    return app


__all__ = ["create_app"]
