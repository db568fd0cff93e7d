"""Check localhub's REST answers against GitHub's own OpenAPI description.

localhub is only useful if clients (PyGithub, our sync code) cannot tell it from GitHub, so
every `/api/v3` JSON response a test provokes is validated against the schema GitHub
publishes for that operation and status (tests/fixtures/github-openapi/operations.json,
trimmed by trim.py next to it). The `localhub` fixture installs a `Recorder` and fails the
test at teardown with every response that did not conform.

The schemas are OpenAPI 3.0 schema objects; `json_schema()` turns them into JSON Schema
2020-12 (`nullable`, boolean `exclusiveMinimum`/`exclusiveMaximum`, overlapping `oneOf`
branches) so `jsonschema` can check them. Formats are checked (date-time, uri, email):
a timestamp in the wrong form breaks clients just as a missing field does. Where GitHub's
description is known to be wrong (an issue in github/rest-api-description says so), an
`Erratum` corrects the loaded schema; nothing else is relaxed.
"""

from __future__ import annotations

import copy
import json
import re
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator, FormatChecker
from jsonschema.exceptions import ValidationError, best_match

API_PREFIX = "/api/v3"
FIXTURE = Path(__file__).resolve().parent / "fixtures" / "github-openapi" / "operations.json"
FAULT_HEADER = "X-Localhub-Fault"  # responses localhub's fault injection made up on purpose

# Path parameters whose values may contain "/" (refs, file paths, `base...head`, branch and
# label names); GitHub takes them unencoded.
SLASHY_PARAMS = frozenset({"ref", "path", "basehead", "branch", "name"})
MESSAGE_LIMIT = 300

# ---------------------------------------------------------------------------- formats

FORMATS = FormatChecker(formats=())
_DATE_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")
_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:\S+$")


@FORMATS.checks("date-time")
def _is_date_time(value: object) -> bool:
    """RFC 3339, as GitHub writes timestamps (`2011-01-26T19:01:12Z`)."""
    if not isinstance(value, str):
        return True
    if not _DATE_TIME.match(value):
        return False
    try:
        datetime.fromisoformat(value.replace("z", "Z").replace("t", "T"))
    except ValueError:
        return False
    return True


@FORMATS.checks("uri")
def _is_uri(value: object) -> bool:
    """An absolute URI (scheme and no blanks). Lenient on purpose about template braces,
    which GitHub itself puts in some `format: uri` fields."""
    return not isinstance(value, str) or bool(_URI.match(value))


@FORMATS.checks("email")
def _is_email(value: object) -> bool:
    if not isinstance(value, str):
        return True
    local, at, domain = value.rpartition("@")
    return bool(at and local and domain)


# ---------------------------------------------------------------------------- OpenAPI -> JSON Schema

_SUBSCHEMA_MAPS = ("properties", "patternProperties", "$defs", "dependentSchemas")
_SUBSCHEMA_ONE = ("items", "additionalProperties", "not", "contains", "propertyNames",
                  "unevaluatedProperties", "unevaluatedItems", "if", "then", "else")
_SUBSCHEMA_LIST = ("allOf", "anyOf", "oneOf", "prefixItems")


def json_schema(schema: Any, openapi: str = "3.0.3") -> Any:
    """The JSON Schema 2020-12 equivalent of an OpenAPI schema object. OpenAPI 3.1 schemas
    already are JSON Schema and come back unchanged."""
    if not openapi.startswith("3.0"):
        return schema
    return _convert(schema)


def _convert(schema: Any) -> Any:
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _SUBSCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: _convert(sub) for name, sub in value.items()}
        elif key in _SUBSCHEMA_ONE:
            out[key] = _convert(value)
        elif key in _SUBSCHEMA_LIST and isinstance(value, list):
            out[key] = [_convert(sub) for sub in value]
        else:
            out[key] = value
    # 3.0's booleans modify minimum/maximum; 2020-12 has numeric exclusive bounds.
    for bound, exclusive in (("minimum", "exclusiveMinimum"), ("maximum", "exclusiveMaximum")):
        if isinstance(out.get(exclusive), bool) and out.pop(exclusive) and bound in out:
            out[exclusive] = out.pop(bound)
    # GitHub's description writes `oneOf` where its branches overlap (two error shapes that
    # both accept any error body; branches that all allow null), so "exactly one" fails on
    # bodies GitHub itself sends: a body must match at least one branch.
    if isinstance(out.get("oneOf"), list):
        branches = out.pop("oneOf")
        if "anyOf" in out:
            out["allOf"] = [*out.get("allOf", []), {"anyOf": branches}]
        else:
            out["anyOf"] = branches
    if out.pop("nullable", False) is True:
        out = _nullable(out)
    else:
        out.pop("nullable", None)
    return out


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """`nullable: true`: null is allowed besides what the rest of the schema allows."""
    kind = schema.get("type")
    if isinstance(kind, str) and not any(k in schema for k in _SUBSCHEMA_LIST):
        schema = {**schema, "type": [kind, "null"]}
        if isinstance(schema.get("enum"), list) and None not in schema["enum"]:
            schema["enum"] = [*schema["enum"], None]
        return schema
    return {"anyOf": [{"type": "null"}, schema]}


def validator(schema: Any, openapi: str = "3.0.3") -> Draft202012Validator:
    """A validator for an OpenAPI schema object, with localhub's format checks."""
    return Draft202012Validator(json_schema(schema, openapi), format_checker=FORMATS)


def first_error(check: Draft202012Validator, body: Any) -> ValidationError | None:
    """The most telling error (jsonschema's best match, descending into oneOf/anyOf), or None."""
    return best_match(check.iter_errors(body))


def describe(error: ValidationError) -> str:
    """`$.head.repo.owner: 'login' is a required property`, shortened for a test report. For
    a failed oneOf/anyOf, why each branch failed (jsonschema's own message would print the
    whole object)."""
    if error.validator in ("oneOf", "anyOf") and error.context:
        branches: dict[int, list[ValidationError]] = {}
        for sub in error.context:
            branches.setdefault(int(sub.schema_path[0]), []).append(sub)
        schemas = error.validator_value if isinstance(error.validator_value, list) else []
        reasons = []
        for index, subs in sorted(branches.items()):
            title = schemas[index].get("title") if index < len(schemas) and isinstance(schemas[index], dict) else None
            sub = best_match(subs)
            if sub is not None:
                reasons.append(f"[{title or f'branch {index}'}] {describe(sub)}")
        return f"{error.json_path}: matches no {error.validator} branch: " + "; ".join(reasons)
    message = error.message
    if len(message) > MESSAGE_LIMIT:
        message = message[:MESSAGE_LIMIT] + "..."
    return f"{error.json_path}: {message}"


# ---------------------------------------------------------------------------- errata

@dataclass(frozen=True)
class Erratum:
    """A place where GitHub's description disagrees with what GitHub answers, confirmed by
    an issue in github/rest-api-description. Applied to the loaded schemas (the fixture
    stays as published); loading fails if the place no longer exists, so a regenerated
    fixture gets its errata reviewed."""

    operations: tuple[str, ...]
    status: str
    location: tuple[str, ...]  # keys from the response schema down to the corrected schema
    change: dict[str, Any]
    reason: str


ERRATA: tuple[Erratum, ...] = (
    Erratum(("pulls/list", "repos/list-pull-requests-associated-with-commit"), "200",
            ("items", "properties", "labels", "items", "properties", "description"), {"nullable": True},
            "pull-request-simple's label description is null for labels without one, as in pull-request "
            "(https://github.com/github/rest-api-description/issues/1812)"),
)


def apply_errata(operations: list[dict[str, Any]], errata: Iterable[Erratum] = ERRATA) -> list[dict[str, Any]]:
    """The operations with the errata applied, as copies."""
    operations = copy.deepcopy(operations)
    by_id = {op["operationId"]: op for op in operations}
    for erratum in errata:
        for operation_id in erratum.operations:
            try:
                schema = by_id[operation_id]["responses"][erratum.status]
                for key in erratum.location:
                    schema = schema[key]
            except KeyError:
                raise LookupError(f"erratum for {operation_id} {erratum.status} "
                                  f"{'.'.join(erratum.location)} no longer applies: {erratum.reason}") from None
            schema.update(erratum.change)
    return operations


# ---------------------------------------------------------------------------- operations

@dataclass
class Operation:
    """One GitHub operation: its template, and a validator per documented JSON status, built
    on first use (most tests touch a handful of the 58)."""

    method: str
    path: str
    operation_id: str
    schemas: dict[str, Any]
    openapi: str
    pattern: re.Pattern[str] = field(init=False)
    literal: int = field(init=False)
    _validators: dict[str, Draft202012Validator] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        self.pattern = template_regex(self.path)
        self.literal = len(re.sub(r"\{[^}]+\}", "", self.path))

    def validator(self, status: int) -> Draft202012Validator | None:
        """The validator for a status's JSON body, or None when the spec lists no JSON body."""
        key = str(status)
        if key not in self.schemas:
            return None
        if key not in self._validators:
            self._validators[key] = validator(self.schemas[key], self.openapi)
        return self._validators[key]

    def __str__(self) -> str:
        return f"{self.method} {self.path} ({self.operation_id})"


def template_regex(template: str) -> re.Pattern[str]:
    """`/repos/{owner}/{repo}/pulls/{pull_number}` as a regex. Numbers and ids take digits
    only (as localhub's routes do); refs, paths and names may span several segments."""
    parts = []
    for literal, name in re.findall(r"([^{]*)(?:\{([^}]+)\})?", template):
        parts.append(re.escape(literal))
        if not name:
            continue
        if name.endswith(("_number", "_id")):
            parts.append(r"\d+")
        elif name in SLASHY_PARAMS:
            parts.append(r".+")
        else:
            parts.append(r"[^/]+")
    return re.compile("^" + "".join(parts) + "$")


class Spec:
    """The operations localhub implements, with their response schemas and GitHub's error
    shapes, as loaded from operations.json."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.openapi: str = data.get("openapi", "3.0.3")
        self.operations = [Operation(op["method"].upper(), op["path"], op["operationId"], op["responses"],
                                     self.openapi) for op in apply_errata(data["operations"])]
        errors = data["errors"]
        # GitHub always sends `message` and `documentation_url`, though basic-error makes
        # neither required; an error body without them is no GitHub error.
        basic = dict(errors["basic-error"])
        basic["required"] = sorted({*basic.get("required", []), "message", "documentation_url"})
        self.basic_error = validator(basic, self.openapi)
        self.validation_errors = [validator(errors[name], self.openapi)
                                  for name in ("validation-error", "validation-error-simple") if name in errors]

    def match(self, method: str, path: str) -> Operation | None:
        """The operation a request went to (`/api/v3` prefix optional), preferring the most
        literal template: `/commits/{ref}/status` over `/commits/{ref}`."""
        if path.startswith(API_PREFIX + "/"):
            path = path[len(API_PREFIX):]
        method = method.upper()
        found = [op for op in self.operations if op.method == method and op.pattern.match(path)]
        return max(found, key=lambda op: op.literal) if found else None

    def error_problem(self, body: Any) -> str | None:
        """Why `body` is not one of GitHub's error shapes, or None when it is."""
        if isinstance(body, dict) and "errors" in body and self.validation_errors:
            found = [first_error(check, body) for check in self.validation_errors]
            if any(error is None for error in found):
                return None
            return "not GitHub's validation-error shape: " + describe(found[0])  # type: ignore[arg-type]
        error = first_error(self.basic_error, body)
        return None if error is None else "not GitHub's basic-error shape: " + describe(error)

    def check(self, method: str, path: str, status: int, body: Any) -> str | None:
        """Why a JSON response is not what GitHub documents, or None when it conforms."""
        op = self.match(method, path)
        if status >= 400:
            problem = self.error_problem(body)
            if problem is not None:
                return f"{op or method + ' ' + path} -> {status}: {problem}"
        if op is None:
            if status >= 400:
                return None
            return f"{method} {path} -> {status}: no such operation in operations.json"
        check = op.validator(status)
        if check is None:
            if status >= 400:
                return None
            return f"{op} -> {status}: status not documented with a JSON body"
        error = first_error(check, body)
        return None if error is None else f"{op} -> {status}: {describe(error)}"


@cache
def load_spec(path: Path = FIXTURE) -> Spec:
    """operations.json, loaded once per test session."""
    return Spec(json.loads(path.read_text()))


# ---------------------------------------------------------------------------- webhooks

WEBHOOKS = FIXTURE.with_name("webhooks.json")
# Sent only when the hook has a secret (GitHub's "Validating webhook deliveries").
SIGNATURE_HEADER = "x-hub-signature-256"


@dataclass(frozen=True)
class Webhook:
    """What GitHub's description gives one `<event>$<action>` delivery: its headers (lower
    case) and a validator for its JSON body."""

    headers: tuple[str, ...]
    body: Draft202012Validator


@cache
def _webhooks(path: Path = WEBHOOKS) -> dict[str, Webhook]:
    """webhooks.json (trim_webhooks.py), each body schema carrying the components its `$ref`s
    point into."""
    data = json.loads(path.read_text())
    openapi = data.get("openapi", "3.0.3")
    components = {"schemas": {name: json_schema(schema, openapi)
                              for name, schema in data["components"]["schemas"].items()}}
    return {name: Webhook(tuple(h.lower() for h in hook["headers"]),
                          Draft202012Validator({**json_schema(hook["body"], openapi), "components": components},
                                               format_checker=FORMATS))
            for name, hook in data["webhooks"].items()}


def webhook_problem(event: str, payload: Any, headers: dict[str, str] | None = None) -> str | None:
    """Why a delivery is not what GitHub's OpenAPI description gives for its event and action
    (`x-webhooks`): a header it names is missing, or the body does not fit; None when it fits.
    `headers` has lower-case names (without them only the body is checked); the signature is
    expected only of a signed delivery (one with the legacy `x-hub-signature`: a hook with a
    secret)."""
    name = f"{event}${payload.get('action') or 'event'}" if isinstance(payload, dict) else event
    hook = _webhooks().get(name)
    if hook is None:
        return f"{name}: no request body in {WEBHOOKS.name} (add it to github-webhooks/trim.py's ROOTS)"
    if headers is not None:
        signed = "x-hub-signature" in headers
        missing = [h for h in hook.headers if h not in headers and (signed or h != SIGNATURE_HEADER)]
        if missing:
            return f"{name} (OpenAPI): without the header(s) {', '.join(missing)}"
    error = first_error(hook.body, payload)
    return None if error is None else f"{name} (OpenAPI): {describe(error)}"


# ---------------------------------------------------------------------------- recording

@dataclass(frozen=True)
class Exchange:
    """One `/api/v3` answer as the client saw it."""

    method: str
    path: str
    status: int
    content_type: str
    body: bytes
    fault: bool


WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


class Recorder:
    """WSGI middleware around localhub's Flask app: keeps every `/api/v3` response so the
    fixture can check them after the test. Middleware rather than a Flask hook so it sees
    the final bytes, after every after_request hook (faults, headers) has run."""

    def __init__(self, app: WsgiApp, spec: Spec | None = None) -> None:
        self.app = app
        self.spec = spec
        self.exchanges: list[Exchange] = []
        self._lock = threading.Lock()

    @classmethod
    def install(cls, flask_app: Any, spec: Spec | None = None) -> Recorder:
        """Wrap a Flask app's wsgi_app (safe while it serves) and keep the recorder in its
        extensions, where tests can reach it as `app.extensions["conformance"]`."""
        recorder = cls(flask_app.wsgi_app, spec)
        flask_app.wsgi_app = recorder
        flask_app.extensions["conformance"] = recorder
        return recorder

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        raw = environ.get("PATH_INFO", "")
        path = raw.encode("latin-1").decode("utf-8", "replace")  # WSGI hands paths over as latin-1
        if not (path == API_PREFIX or path.startswith(API_PREFIX + "/")):
            return self.app(environ, start_response)
        seen: dict[str, Any] = {}

        def capture(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            seen["status"], seen["headers"] = status, headers
            return start_response(status, headers, exc_info)

        result = self.app(environ, capture)
        try:
            chunks = list(result)
        finally:
            close = getattr(result, "close", None)
            if close is not None:
                close()
        headers = {key.lower(): value for key, value in seen.get("headers", [])}
        exchange = Exchange(environ.get("REQUEST_METHOD", "GET").upper(), path,
                            int(str(seen.get("status", "0")).split()[0]), headers.get("content-type", ""),
                            b"".join(chunks), FAULT_HEADER.lower() in headers)
        with self._lock:
            self.exchanges.append(exchange)
        return chunks

    def problems(self) -> list[str]:
        """Every distinct way a recorded response differs from GitHub's description, with
        how often and one request that showed it."""
        spec = self.spec or load_spec()
        with self._lock:
            exchanges = list(self.exchanges)
        counts: dict[str, tuple[int, str]] = {}
        for exchange in exchanges:
            problem = _problem(spec, exchange)
            if problem is None:
                continue
            count, example = counts.get(problem, (0, f"{exchange.method} {exchange.path}"))
            counts[problem] = (count + 1, example)
        return [f"{problem}  [{count}x, e.g. {example}]" for problem, (count, example) in counts.items()]

    def report(self) -> str:
        problems = self.problems()
        if not problems:
            return ""
        return ("localhub answered differently from GitHub's OpenAPI description "
                "(tests/fixtures/github-openapi/operations.json):\n" + "\n".join(f"  - {p}" for p in problems))


def _problem(spec: Spec, exchange: Exchange) -> str | None:
    if exchange.fault:
        return None
    mime = exchange.content_type.split(";")[0].strip().lower()
    is_json = mime == "application/json" or mime.endswith("+json")
    if not exchange.body.strip():
        return None
    if not is_json:
        # Other media types (diffs, patches, raw contents) are fine; errors never are.
        if exchange.status >= 400:
            kind = mime or "untyped"
            return f"{exchange.method} {exchange.path} -> {exchange.status}: error body is {kind}, not JSON"
        return None
    try:
        body = json.loads(exchange.body)
    except ValueError as exc:
        return f"{exchange.method} {exchange.path} -> {exchange.status}: body is not valid JSON ({exc})"
    return spec.check(exchange.method, exchange.path, exchange.status, body)
