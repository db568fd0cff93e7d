"""Being written: see app.MODULES."""

from __future__ import annotations

from flask import Flask

from bot.forge.localhub.hub import Hub


def register(app: Flask, hub: Hub) -> None:
    return None
