"""localhub's own endpoints (not GitHub's), under `/_localhub/`: accounts and tokens for
tests and demos. localhub binds to loopback by default; these need no authentication."""

from __future__ import annotations

import re

from flask import Blueprint, Flask, jsonify

from bot.forge.localhub.errors import ApiError, json_body
from bot.forge.localhub.hub import Hub

LOGIN = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,37}[A-Za-z0-9])?(\[bot\])?$")


def check_login(value: object) -> str:
    if not isinstance(value, str) or not LOGIN.match(value):
        raise ApiError(422, "Validation Failed", errors=[{
            "resource": "User", "field": "login", "code": "invalid",
            "message": "login must be 1-39 letters, digits or single hyphens"}])
    return value


def register(app: Flask, hub: Hub) -> None:
    bp = Blueprint("localhub_admin", __name__, url_prefix="/_localhub")

    @bp.post("/tokens")
    def create_token():  # type: ignore[no-untyped-def]
        body = json_body()
        login = check_login(body.get("login"))
        user = hub.ensure_user(login)
        token, _ = hub.issue_token(user["id"])
        return jsonify({"token": token, "login": user["login"], "id": user["id"]}), 201

    @bp.get("/health")
    def health():  # type: ignore[no-untyped-def]
        return jsonify({"ok": True})

    app.register_blueprint(bp)
