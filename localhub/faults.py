"""Fault injection: make the next N requests matching a method and path glob fail the way
GitHub sometimes does, so clients' retry and recovery paths can be tested for real.

    POST   /_localhub/faults   {"method": "PUT", "path": "/repos/*/pulls/*/merge", "status": 500,
                                "times": 1, "apply": true, "delay_ms": 0, "body": ..., "headers": {...}}
    GET    /_localhub/faults   every fault with its `remaining` count
    DELETE /_localhub/faults   clear them all (DELETE /_localhub/faults/<id>: one)

A plain fault answers from `before_request`, ahead of authentication (an outage does not
check tokens). With `apply: true` the real handler runs first and its response is replaced
afterwards: GitHub at times merges a pull request and still answers 500, and clients must
cope with an effect they were told failed. Faults cover git smart HTTP paths too. Every
faulty answer carries `X-Localhub-Fault: <id>` so tests and conformance checks can tell
made-up answers from localhub's own.
"""

from __future__ import annotations

import fnmatch
import threading
import time
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any

from flask import Blueprint, Response, current_app, g, jsonify, request
from flask.blueprints import BlueprintSetupState
from flask.typing import ResponseReturnValue

from localhub import messages
from localhub.access import is_admin
from localhub.errors import DOCS, ApiError, json_body, not_found

API = "/api/v3"
HEADER = "X-Localhub-Fault"
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "*"})
FIELDS = frozenset({"method", "path", "status", "body", "headers", "times", "apply", "delay_ms"})
MAX_DELAY_MS = 300_000
MAX_TIMES = 1_000_000


@dataclass
class Fault:
    """One armed fault; `remaining` counts down as matching requests arrive."""

    id: int
    method: str
    path: str
    status: int
    body: Any
    headers: dict[str, str]
    times: int
    apply: bool
    delay_ms: int
    remaining: int = field(init=False)
    hits: int = 0

    def __post_init__(self) -> None:
        self.remaining = self.times

    def matches(self, method: str, path: str) -> bool:
        """Method (or `*`) and glob; a glob written without `/api/v3` also matches REST paths."""
        if self.method not in ("*", method):
            return False
        if fnmatch.fnmatchcase(path, self.path):
            return True
        return path.startswith(API + "/") and fnmatch.fnmatchcase(path[len(API):], self.path)

    def response(self) -> Response:
        """The answer a client sees: GitHub's error shape unless a body was given."""
        body = self.body
        if body is None:
            body = {"message": _reason(self.status), "documentation_url": DOCS, "status": str(self.status)}
        if isinstance(body, str):
            resp = Response(body, status=self.status, mimetype="text/plain")
        else:
            resp = jsonify(body)
            resp.status_code = self.status
        for key, value in self.headers.items():
            resp.headers[key] = value
        resp.headers[HEADER] = str(self.id)
        return resp

    def as_json(self) -> dict[str, Any]:
        return {"id": self.id, "method": self.method, "path": self.path, "status": self.status, "body": self.body,
                "headers": self.headers, "times": self.times, "remaining": self.remaining, "hits": self.hits,
                "apply": self.apply, "delay_ms": self.delay_ms}


def _reason(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Server Error"


class Faults:
    """The armed faults. One lock guards matching and counting, so with concurrent requests
    a fault with `times: N` fires exactly N times."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._faults: list[Fault] = []
        self._next_id = 1

    def add(self, spec: dict[str, Any]) -> Fault:
        with self._lock:
            fault = Fault(id=self._next_id, **spec)
            self._next_id += 1
            self._faults.append(fault)
            return fault

    def claim(self, method: str, path: str) -> Fault | None:
        """The first armed fault for this request, counted as used; None if there is none."""
        if is_admin(path):
            return None  # faults must never lock out the endpoint that clears them
        with self._lock:
            for fault in self._faults:
                if fault.remaining > 0 and fault.matches(method, path):
                    fault.remaining -= 1
                    fault.hits += 1
                    return fault
        return None

    def snapshot(self) -> list[dict[str, Any]]:
        with self._lock:
            return [fault.as_json() for fault in self._faults]

    def clear(self) -> None:
        with self._lock:
            self._faults.clear()

    def remove(self, fault_id: int) -> bool:
        with self._lock:
            kept = [fault for fault in self._faults if fault.id != fault_id]
            removed = len(kept) != len(self._faults)
            self._faults = kept
            return removed


def _invalid(field_name: str, message: str) -> ApiError:
    return ApiError(422, "Validation Failed", errors=[{
        "resource": "Fault", "field": field_name, "code": "invalid", "message": message}])


def _integer(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def parse_spec(body: dict[str, Any]) -> dict[str, Any]:
    """The fault's fields from a request body, or GitHub's 422 naming the first bad field.
    Unknown fields are refused too: a misspelt `time` must not silently become `times: 1`."""
    unknown = sorted(set(body) - FIELDS)
    if unknown:
        raise _invalid(unknown[0], messages.FAULT_UNKNOWN_FIELD.format(fields=", ".join(sorted(FIELDS))))
    method = body.get("method", "*")
    if not isinstance(method, str) or method.upper() not in METHODS:
        raise _invalid("method", messages.FAULT_METHOD.format(methods=", ".join(sorted(METHODS))))
    path = body.get("path")
    if not isinstance(path, str) or not path.strip():
        raise ApiError(422, messages.VALIDATION_FAILED, errors=[{
            "resource": "Fault", "field": "path", "code": "missing_field", "message": messages.FAULT_PATH}])
    path = path.strip()
    if not path.startswith(("/", "*", "?", "[")):
        path = "/" + path
    status = body.get("status", 500)
    if not _integer(status) or not 200 <= status <= 599:
        raise _invalid("status", messages.FAULT_STATUS)
    payload = body.get("body")
    if payload is not None and not isinstance(payload, dict | list | str):
        raise _invalid("body", messages.FAULT_BODY)
    headers = body.get("headers")
    headers = {} if headers is None else headers
    if not isinstance(headers, dict):
        raise _invalid("headers", messages.FAULT_HEADERS)
    clean_headers: dict[str, str] = {}
    for key, value in headers.items():
        if not key or not isinstance(value, str | int | float) or isinstance(value, bool) \
                or any(c in str(key) + str(value) for c in "\r\n") or ":" in key:
            raise _invalid("headers", messages.FAULT_HEADER.format(key=key))
        clean_headers[key] = str(value)
    times = body.get("times", 1)
    if not _integer(times) or not 1 <= times <= MAX_TIMES:
        raise _invalid("times", messages.FAULT_TIMES.format(limit=MAX_TIMES))
    apply = body.get("apply", False)
    if not isinstance(apply, bool):
        raise _invalid("apply", messages.FAULT_APPLY)
    delay = body.get("delay_ms")
    delay = 0 if delay is None else delay
    if not isinstance(delay, int | float) or isinstance(delay, bool) or not 0 <= delay <= MAX_DELAY_MS:
        raise _invalid("delay_ms", messages.FAULT_DELAY.format(limit=MAX_DELAY_MS))
    return {"method": method.upper(), "path": path, "status": status, "body": payload, "headers": clean_headers,
            "times": times, "apply": apply, "delay_ms": int(delay)}


EXTENSION = "localhub_faults"  # app.extensions key of the app's armed faults
bp = Blueprint("localhub_faults", __name__, url_prefix="/_localhub/faults")


def armed() -> Faults:
    """The faults armed on the app answering this request (each app has its own)."""
    return current_app.extensions[EXTENSION]  # type: ignore[no-any-return]


@bp.post("")
def create() -> ResponseReturnValue:
    fault = armed().add(parse_spec(json_body()))
    return jsonify(fault.as_json()), 201


@bp.get("")
def index() -> ResponseReturnValue:
    return jsonify(armed().snapshot())


@bp.delete("")
def clear() -> ResponseReturnValue:
    armed().clear()
    return Response(status=204)


@bp.delete("/<int:fault_id>")
def remove(fault_id: int) -> ResponseReturnValue:
    if not armed().remove(fault_id):
        raise not_found()
    return Response(status=204)


def inject() -> Response | None:
    fault = armed().claim(request.method, request.path)
    if fault is None:
        return None
    if fault.apply:
        g.localhub_fault = fault  # answered in replace(), once the real handler has run
        return None
    _sleep(fault)
    g.localhub_fault_headers = fault
    return fault.response()


def replace(resp: Response) -> Response:
    fault: Fault | None = g.pop("localhub_fault", None)
    if fault is None:
        return resp
    resp.close()
    _sleep(fault)
    g.localhub_fault_headers = fault
    return fault.response()


def own_headers(resp: Response) -> Response:
    """The fault's headers over GitHub's: app.py's hook sets X-RateLimit-* on every answer,
    and a made-up rate limit (`X-RateLimit-Remaining: 0`) must reach the client."""
    fault: Fault | None = g.pop("localhub_fault_headers", None)
    if fault is not None:
        for key, value in fault.headers.items():
            resp.headers[key] = value
    return resp


@bp.record_once
def arm(state: BlueprintSetupState) -> None:
    """Each app gets its own faults, and hooks placed where a fault must act. A blueprint's
    own request hooks would run after the app's, so these go into the app's lists: `inject`
    first of all before_request hooks, so a fault answers ahead of authentication. after_request
    hooks run last-registered first: `replace` is registered last (create_app registers this
    blueprint last), so it runs first and the replacement still gets GitHub's headers;
    `own_headers` goes to the front of the list, so it runs after all of them."""
    app = state.app
    app.extensions[EXTENSION] = Faults()
    app.before_request_funcs.setdefault(None, []).insert(0, inject)
    app.after_request(replace)
    app.after_request_funcs.setdefault(None, []).insert(0, own_headers)


def _sleep(fault: Fault) -> None:
    if fault.delay_ms:
        time.sleep(fault.delay_ms / 1000)
