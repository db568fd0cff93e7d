"""localhub's own endpoints (not GitHub's), under `/_localhub/`: accounts and tokens for
tests and demos. Like every endpoint there, they answer only requests addressed to a loopback
host and carrying the operator credential (app.py, localhub.access): a token for any account,
new or not, is the operator's to make, or any web page or local process could sign up an
account a memory's configuration names, or act as the owner of every repository."""

from __future__ import annotations

import re
import threading

from flask import Blueprint, current_app, jsonify
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


USAGE = "localhub.usage"  # app.extensions key of the app's Usage


class Usage:
    """Every request GitHub would count, by account and kind: `GET`, `POST`, `PUT`, `PATCH`,
    `DELETE` for REST (GitHub's secondary limits count the last four as content-generating,
    at 5 points each against 1 for a read) and `git` for the git transport. Read by
    `GET /_localhub/requests`, so what a run of memrepo spends is measured, not estimated."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: dict[str, dict[str, int]] = {}

    def add(self, account: str, kind: str) -> None:
        with self._lock:
            row = self._counts.setdefault(account, {})
            row[kind] = row.get(kind, 0) + 1

    def snapshot(self) -> dict[str, dict[str, int]]:
        with self._lock:
            return {account: dict(row) for account, row in self._counts.items()}


bp = Blueprint("localhub_admin", __name__, url_prefix="/_localhub")


@bp.post("/tokens")
def create_token() -> ResponseReturnValue:
    hub = current_hub()
    body = json_body()
    login = check_login(body.get("login"))
    if login.lower().endswith(BOT_SUFFIX):
        raise ApiError(422, messages.BOT_NO_TOKEN.format(login=login))
    user, _ = hub.account(login)
    token, _ = hub.issue_token(user["id"])
    return jsonify({"token": token, "login": user["login"], "id": user["id"]}), 201


@bp.get("/health")
def health() -> ResponseReturnValue:
    return jsonify({"ok": True})


@bp.get("/requests")
def requests_made() -> ResponseReturnValue:
    """What each account has asked of this localhub's REST API (by method) and git transport
    (`git`) since it started: the figures a budget is set against."""
    return jsonify({"by_account": current_app.extensions[USAGE].snapshot()})
