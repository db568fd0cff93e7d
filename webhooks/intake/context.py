"""What every request of the receiver shares: its settings, its Redis client, and how many
event streams the process holds."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from flask import Flask, Response, current_app, jsonify
from redis import Redis

from bot.settings import Settings

EXTENSION = "memrepo.webhooks"


@dataclass(frozen=True)
class Context:
    settings: Settings
    redis: Redis
    streams: Callable[[], int] | None = None  # open event streams of this process (webhooks/asgi.py)


def context(app: Flask | None = None) -> Context:
    return (app or current_app).extensions[EXTENSION]  # type: ignore[no-any-return]


def answer(status: int, message: str, **extra: Any) -> Response:
    """A JSON answer `{"message": ..., ...}`: GitHub shows it in the delivery log, so every
    answer says in words what happened to the delivery."""
    resp = jsonify({"message": message, **extra})
    resp.status_code = status
    return resp
