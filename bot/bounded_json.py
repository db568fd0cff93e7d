"""JSON from outside, with a bound on how deeply it may nest: pure functions, standard library only.

Python's json module parses arrays and objects by recursion, so text of 100,000 nested brackets
ends in RecursionError deep inside the parser: a crash where a refusal is due. Every public entry
point that parses JSON (`memrepo tool`, `memrepo transcript import`, head events, the webhook
receiver, ...) therefore reads it with `loads_bounded`, which measures the depth first, by a scan
that does not recurse: strings are cut out (a bracket inside a string is text, not structure),
then the running count of opening minus closing brackets is taken, chunk by chunk, stopping at
the first chunk that goes too deep. Text with no more opening brackets than the bound cannot go
deeper, so the scan is skipped for it, and most text costs one count of its brackets. Only text
within the bound is handed to json.loads.

MAX_DEPTH is 64: what memrepo reads nests a few levels (a tool call 2-3, a transcript row 1,
GitHub's webhook payloads 6), so 64 is ten times the deepest, far below Python's recursion limit
(1,000 frames) and any stack a walk of the value needs.

JSON Lines from outside (MCP over stdio, harnesses' transcripts) are bounded in length too:
`LineSplitter` cuts bytes, as they are read in pieces, into lines of at most a bound, and
reports a longer line by its size without ever holding more of it than the bound, so a reader's
memory stays bounded whatever one line holds and its byte offsets stay exact.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

from bot.errors import MemrepoError

# JSON from outside (bot/bounded_json.py).
JSON_TOO_DEEP = "{what} nests arrays and objects deeper than {limit} levels, more than memrepo reads"

MAX_DEPTH = 64

# A complete JSON string: no unescaped quote inside, any escaped character. An unterminated
# string is not matched, so its brackets count as structure: the scan may over-count for text
# that is not JSON (which json.loads refuses anyway), never under-count for text that is.
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}.__getitem__
_CHUNK = 1 << 16  # brackets summed at a time between checks against the bound


class TooDeepError(MemrepoError, ValueError):
    """JSON nesting deeper than the bound. A MemrepoError, so wherever it is not caught the
    person reads its one line; a ValueError, as json.loads's own refusals are, so a caller that
    reports malformed JSON its own way reports this too."""


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


def too_deep(text: str, max_depth: int = MAX_DEPTH) -> bool:
    """Whether `text` nests deeper than `max_depth`; cheap for text with few brackets."""
    if text.count("[") + text.count("{") <= max_depth:
        return False
    return nesting_depth(text, stop_above=max_depth) > max_depth


def loads_bounded(text: str | bytes, max_depth: int = MAX_DEPTH, *, what: str = "the JSON", **options: Any) -> Any:
    """json.loads(text, **options), refused with TooDeepError (naming `what` was read) before the
    parser sees it, for text nesting deeper than `max_depth`. Bytes are read as json.loads reads
    them (UTF-8, -16 or -32 by their first bytes); bytes that do not decode raise
    UnicodeDecodeError, as there."""
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode(json.detect_encoding(text), "surrogatepass")
    if too_deep(text, max_depth):
        raise TooDeepError(JSON_TOO_DEEP.format(what=what, limit=max_depth))
    return json.loads(text, **options)


@dataclass(frozen=True)
class Overlong:
    """A line longer than a LineSplitter's bound, read past unheld: its `size` in bytes (with
    its newline), so the offsets of the lines after it stay exact."""

    size: int


class LineSplitter:
    """Bytes fed in pieces, cut into lines at b"\\n": each complete line (with its newline) of at
    most `max_line` bytes (the newline counted), or Overlong for a longer one. Of a line it holds at most `max_line`
    bytes; the rest of an over-long line is only counted. `pending` is the size of the
    unfinished line so far."""

    def __init__(self, max_line: int) -> None:
        self.max_line = max_line
        self._part = bytearray()
        self._skipped = 0  # bytes of an over-long line passed over so far (its held part dropped)

    @property
    def pending(self) -> int:
        return self._skipped or len(self._part)

    def feed(self, chunk: bytes) -> list[bytes | Overlong]:
        """The lines `chunk` completes, in order."""
        out: list[bytes | Overlong] = []
        start = 0
        while start < len(chunk):
            end = chunk.find(b"\n", start)
            piece = chunk[start:] if end < 0 else chunk[start:end + 1]
            start += len(piece)
            if self._skipped:
                self._skipped += len(piece)
            elif len(self._part) + len(piece) > self.max_line:
                self._skipped = len(self._part) + len(piece)
                self._part.clear()
            else:
                self._part += piece
            if end >= 0:
                out.extend(self.flush())
        return out

    def flush(self) -> list[bytes | Overlong]:
        """The line held so far, unfinished (none if nothing is): at the end of input."""
        out: list[bytes | Overlong] = [Overlong(self._skipped)] if self._skipped else \
            [bytes(self._part)] if self._part else []
        self._part.clear()
        self._skipped = 0
        return out
