"""gunicorn's worker class for the receiver (`memrepo serve`): uvicorn's, asked for what
bot/serve/receiver.py asks of uvicorn everywhere (asyncio, h11, lifespan, a short graceful
stop). Its own module, so that only `memrepo serve` imports gunicorn."""

from __future__ import annotations

from typing import Any

from uvicorn_worker import UvicornWorker

from bot.serve.receiver import UVICORN


class ReceiverWorker(UvicornWorker):  # type: ignore[misc]
    CONFIG_KWARGS: dict[str, Any] = dict(UVICORN)  # noqa: RUF012 (the base class's own attribute)
