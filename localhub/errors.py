"""GitHub's error bodies: `{"message", "documentation_url", "status"}`, plus `errors` on 422."""

from __future__ import annotations

import json
from typing import Any, TypeVar

from flask import Response, jsonify

from localhub import messages

DOCS = "https://docs.github.com/rest"

T = TypeVar("T")


class ApiError(Exception):
    """Raised anywhere in a request; answered with GitHub's shape for that status."""

    def __init__(self, status: int, message: str, *, errors: list[dict[str, Any]] | None = None,
                 doc: str = DOCS, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.errors = errors
        self.doc = doc
        self.headers = headers or {}

    def response(self) -> Response:
        body: dict[str, Any] = {"message": self.message, "documentation_url": self.doc, "status": str(self.status)}
        if self.errors is not None:
            body["errors"] = self.errors
        resp = jsonify(body)
        resp.status_code = self.status
        for key, value in self.headers.items():
            resp.headers[key] = value
        return resp


def not_found() -> ApiError:
    return ApiError(404, messages.NOT_FOUND)


def or_404(row: T | None) -> T:
    """What a lookup found, or GitHub's 404: a repository's hooks, comments, labels and
    reviews are all missing the same way."""
    if row is None:
        raise not_found()
    return row


def unauthorized() -> ApiError:
    return ApiError(401, messages.BAD_CREDENTIALS)


def validation(resource: str, field: str, code: str = "invalid", message: str | None = None) -> ApiError:
    error: dict[str, Any] = {"resource": resource, "field": field, "code": code}
    if message is not None:
        error = {"resource": resource, "code": "custom", "field": field, "message": message}
    return ApiError(422, messages.VALIDATION_FAILED, errors=[error])


def json_body() -> dict[str, Any]:
    """The request's JSON object, or GitHub's 400 for anything else. Like GitHub, the body
    is read as JSON whatever the Content-Type says (`curl -d` sends a form type)."""
    from flask import request

    raw = request.get_data(cache=True)
    if not raw:
        return {}
    try:
        data = json.loads(raw)
    except ValueError:
        raise ApiError(400, messages.BAD_JSON) from None
    if not isinstance(data, dict):
        raise ApiError(400, messages.BAD_JSON)
    return data
