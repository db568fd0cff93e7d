"""A delivery's body as JSON, with a bound on how deeply it may nest: pure functions, no Flask.

Python's json module parses arrays and objects by recursion, so a signed body of 100,000
nested brackets ends in RecursionError deep inside the parser. The depth is therefore measured
first, by a scan that does not recurse: strings are cut out (a bracket inside a string is text,
not structure), then the running count of opening minus closing brackets is taken, chunk by
chunk, stopping at the first chunk that goes too deep. Only a body within the bound is handed
to json.loads. The scan costs a fraction of the parse for usual payloads (mostly strings), and
about as much as the parse for a body made mostly of brackets.

MAX_DEPTH is 64: GitHub's webhook schemas (tests/fixtures/github-webhooks) allow 6 levels for
the events memrepo reads (a pull request's head repository's owner, say), so 64 is ten times
that, room for whatever GitHub adds, while staying far below Python's recursion limit (1,000
frames) and any stack a walk of the payload needs.
"""

from __future__ import annotations

import json
import re
from itertools import accumulate
from typing import Any
from urllib.parse import parse_qs

from bot import messages

MAX_DEPTH = 64
FORM = "application/x-www-form-urlencoded"

# A complete JSON string: no unescaped quote inside, any escaped character. An unterminated
# string is not matched, so its brackets count as structure: the scan may over-count for text
# that is not JSON (which json.loads refuses anyway), never under-count for text that is.
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}.__getitem__
_CHUNK = 1 << 16  # brackets summed at a time between checks against the bound


class PayloadError(ValueError):
    """A body that is not a usable payload; its text is the receiver's answer (400)."""


def nesting_depth(text: str, stop_above: int | None = None) -> int:
    """How deeply `text` nests arrays and objects, brackets inside strings not counted: 0 for
    a scalar, 1 for `[]` or `{"a": 1}`, 2 for `[[]]`. Exact for JSON; for other text an upper
    bound of what a JSON parser would descend into before failing. With `stop_above`, the
    scan may stop at a depth above it (the answer is then only known to exceed it)."""
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    depth = deepest = 0
    for start in range(0, len(brackets), _CHUNK):
        running = list(accumulate(map(_STEP, brackets[start:start + _CHUNK]), initial=depth))
        deepest, depth = max(deepest, max(running)), running[-1]
        if stop_above is not None and deepest > stop_above:
            break
    return deepest


def decode(body: bytes) -> str:
    """The text of a JSON body, as json.loads would read bytes: UTF-8, -16 or -32 by its
    first bytes, a byte order mark dropped. Raises PayloadError when it does not decode."""
    try:
        return body.decode(json.detect_encoding(body), "surrogatepass")
    except UnicodeDecodeError as exc:
        raise PayloadError(messages.WEBHOOK_NOT_JSON.format(error=str(exc)[:200])) from None


def loads(text: str, max_depth: int = MAX_DEPTH) -> Any:
    """json.loads, refused (PayloadError) for text nesting deeper than `max_depth` before
    the parser sees it, and for text that is not JSON."""
    if nesting_depth(text, stop_above=max_depth) > max_depth:
        raise PayloadError(messages.WEBHOOK_TOO_DEEP.format(limit=max_depth))
    try:
        return json.loads(text)
    except ValueError as exc:  # JSONDecodeError, and ints beyond Python's digit limit
        raise PayloadError(messages.WEBHOOK_NOT_JSON.format(error=str(exc)[:200])) from None


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
            raise PayloadError(messages.WEBHOOK_FORM_NO_PAYLOAD)
        text = fields["payload"][0]
    else:
        text = decode(body)
    payload = loads(text, max_depth)
    if not isinstance(payload, dict):
        raise PayloadError(messages.WEBHOOK_NOT_OBJECT.format(kind=_kind(payload)))
    return payload
