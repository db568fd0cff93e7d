"""A delivery's body as JSON, with a bound on how deeply it may nest: pure functions, no Flask.

The bound is bot.bounded_json's, which every entry point that reads JSON shares: the depth is
measured by a scan that does not recurse before json.loads sees the body (a signed body of
100,000 nested brackets once ended in RecursionError deep inside the parser). GitHub's webhook
schemas (tests/fixtures/github-webhooks) allow 6 levels for the events memrepo reads (a pull
request's head repository's owner, say), a tenth of MAX_DEPTH.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qs

from bot.bounded_json import MAX_DEPTH, TooDeepError, loads_bounded

WEBHOOK_NOT_JSON = "the payload is not JSON ({error})"
WEBHOOK_TOO_DEEP = ("the payload nests arrays and objects deeper than {limit} levels, which this receiver "
                    "does not parse (GitHub's own payloads nest far less)")

FORM = "application/x-www-form-urlencoded"


class PayloadError(ValueError):
    """A body that is not a usable payload; its text is the receiver's answer (400)."""


def decode(body: bytes) -> str:
    """The text of a JSON body, as json.loads would read bytes: UTF-8, -16 or -32 by its
    first bytes, a byte order mark dropped. Raises PayloadError when it does not decode."""
    try:
        return body.decode(json.detect_encoding(body), "surrogatepass")
    except UnicodeDecodeError as exc:
        raise PayloadError(WEBHOOK_NOT_JSON.format(error=str(exc)[:200])) from None


def loads(text: str, max_depth: int = MAX_DEPTH) -> Any:
    """json.loads, refused (PayloadError) for text nesting deeper than `max_depth` before
    the parser sees it, and for text that is not JSON."""
    try:
        return loads_bounded(text, max_depth)
    except TooDeepError:
        raise PayloadError(WEBHOOK_TOO_DEEP.format(limit=max_depth)) from None
    except ValueError as exc:  # JSONDecodeError, and ints beyond Python's digit limit
        raise PayloadError(WEBHOOK_NOT_JSON.format(error=str(exc)[:200])) from None


def _kind(value: object) -> str:
    return "null" if value is None else {dict: "object", list: "array", str: "string"}.get(type(value), "number")


def parse_payload(body: bytes, content_type: str, max_depth: int = MAX_DEPTH) -> dict[str, Any]:
    """The JSON object of a delivery, sent as JSON or (GitHub's default for repository hooks)
    as a form with the JSON in `payload`. Raises PayloadError with the answer's text."""
    if content_type.split(";")[0].strip().lower() == FORM:
        try:
            fields = parse_qs(body.decode("utf-8"), keep_blank_values=True, strict_parsing=True)
        except (UnicodeDecodeError, ValueError):
            fields = {}
        if len(fields.get("payload", [])) != 1:
            raise PayloadError("a form-encoded delivery must carry its JSON in one 'payload' field")
        text = fields["payload"][0]
    else:
        text = decode(body)
    payload = loads(text, max_depth)
    if not isinstance(payload, dict):
        raise PayloadError(f"the payload must be a JSON object, found {_kind(payload)}")
    return payload
