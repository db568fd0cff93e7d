"""JSON Lines rows read and checked before a transcript import writes any: a row that is not
UTF-8, not JSON, nested too deep or not a valid message is a problem, and one problem imports
nothing, so a person fixes every row in one go (the store's `import_lines`, and the
harnesses' imports through `invalid_import`).

Pure: lines and a time stamp in, messages or one error out; the store writes them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from bot.bounded_json import TooDeepError, loads_bounded
from bot.errors import MemrepoError
from bot.texts import Text
from bot.transcript import texts
from bot.transcript.model import Message, from_row, imported_id

IMPORT_INVALID = Text("{path}: {count:|invalid row|invalid rows}, so nothing was imported:\n{problems}")
MAX_PROBLEMS_SHOWN = 20


def checked_rows(lines: Iterable[bytes], name: str, stamp: str) -> list[Message]:
    """The messages of JSON Lines `lines` (blank lines skipped), imported at `stamp`; a row
    without message_id gets `model.imported_id`'s, from the row and its place among its
    conversation's rows. MemrepoError naming every bad row (`invalid_import`) when any is."""
    problems: list[str] = []
    parsed: list[Message] = []
    places: Counter[tuple[str, str]] = Counter()
    for number, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            problems.append(f"line {number}: not valid UTF-8")
            continue
        try:
            row = loads_bounded(text, what="the row")
        except TooDeepError as exc:
            problems.append(texts.IMPORT_ROW_BAD.format(line=number, problem=exc))
            continue
        except ValueError as exc:
            problems.append(f"line {number}: not valid JSON ({exc})")
            continue
        if isinstance(row, dict):
            place = (str(row.get("agent_id")), str(row.get("conversation_id")))
            if row.get("message_id") is None:
                row = {**row, "message_id": imported_id(row, places[place])}
            places[place] += 1
        try:
            parsed.append(from_row(row, imported_at=stamp))
        except MemrepoError as exc:
            problems.append(texts.IMPORT_ROW_BAD.format(line=number, problem=exc))
    if problems:
        raise invalid_import(name, problems)
    return parsed


def invalid_import(name: str, problems: Sequence[str], text: str = IMPORT_INVALID) -> MemrepoError:
    """The error of an import that found bad input, so imported nothing: each problem on a line
    of its own (the first MAX_PROBLEMS_SHOWN), a person fixes them all in one go. `text` says
    what the problems are of (rows, by default)."""
    shown = list(problems[:MAX_PROBLEMS_SHOWN])
    if len(problems) > MAX_PROBLEMS_SHOWN:
        shown.append(f"  ... and {len(problems) - MAX_PROBLEMS_SHOWN} more")
    return MemrepoError(text.format(
        path=name, count=len(problems), problems="\n".join("  " + p for p in shown)), problems=list(problems))
