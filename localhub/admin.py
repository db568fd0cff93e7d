"""localhub's own endpoints (not GitHub's), under `/_localhub/`: accounts and tokens for
tests and demos. They answer only requests addressed to a loopback host (app.py). Anyone
there may make a new account and get its token, as anyone may sign up on GitHub; a token for
an account that exists already needs the operator credential (localhub.operator),
or any local process could act as the owner of every repository."""

from __future__ import annotations

import re

from flask import Blueprint, g, jsonify
from flask.typing import ResponseReturnValue

from localhub import messages
from localhub.errors import ApiError, json_body
from localhub.hub import current_hub

LOGIN = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,37}[A-Za-z0-9])?(\[bot\])?$")
BOT_SUFFIX = "[bot]"


def check_login(value: object) -> str:
    if not isinstance(value, str) or not LOGIN.match(value):
        raise ApiError(422, messages.VALIDATION_FAILED, errors=[{
            "resource": "User", "field": "login", "code": "invalid", "message": messages.LOGIN_INVALID}])
    return value


def require_operator(login: str, what: str) -> None:
    """403 unless the request carries the operator credential: `login`'s account exists, and
    `what` would let the caller act as it."""
    if not getattr(g, "operator", False):
        raise ApiError(403, messages.NEEDS_OPERATOR.format(login=login, what=what))


bp = Blueprint("localhub_admin", __name__, url_prefix="/_localhub")


@bp.post("/tokens")
def create_token() -> ResponseReturnValue:
    hub = current_hub()
    body = json_body()
    login = check_login(body.get("login"))
    if login.lower().endswith(BOT_SUFFIX):
        raise ApiError(422, messages.BOT_NO_TOKEN.format(login=login))
    user, created = hub.account(login)
    if not created:
        require_operator(user["login"], messages.WHAT_TOKEN)
    token, _ = hub.issue_token(user["id"])
    return jsonify({"token": token, "login": user["login"], "id": user["id"]}), 201


@bp.get("/health")
def health() -> ResponseReturnValue:
    return jsonify({"ok": True})
