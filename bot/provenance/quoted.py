"""What a pull request's description quotes of the transcript, read back as messages.

A dream's description quotes, under each change, the messages it rests on (one line each,
shortened; templates/pr/dream.md.j2); an agent's edit that became a pull request quotes what
the user said in its turn (templates/pr/agent-edit.md.j2). The transcript itself stays on the
agent's machine, so where it cannot be read (a served palace, a reviewer's laptop) these quotes
are the user's words `why` can still show, said to be the description's.

Pure: text in, messages out. Only lines in the exact shape the templates write are read, and
only before the provenance block. The description is the same text a reviewer read, but parts
of it (a dream's summary, an edit's reason) come from a model or an agent: an id quoted twice
with different words is dropped rather than guessed at.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from bot.contracts import check_id
from bot.errors import MemrepoError
from bot.pullrequest.provenance import OPENER
from bot.pullrequest.render import plain_text
from bot.transcript.model import KINDS

_DREAM_QUOTE = re.compile(r'- `(?P<id>[^`\s]+)` at (?P<at>[^()]*) \((?P<kind>[a-z_]+), source (?P<source>.*?)\): '
                          r'"(?P<text>.*)"')
_SAID_HEADER = "## What the user said"  # not said: templates/pr/agent-edit.md.j2's heading, matched
_SAID_QUOTE = re.compile(r"`(?P<id>[^`\s]+)`, (?P<at>[^`]*):")
_STAMP = "%Y-%m-%d %H:%M:%S UTC"  # how the descriptions write a time (messages.to_the_second)


def quoted_messages(body: str | None) -> dict[str, dict[str, Any]]:
    """Message id -> {message_id, captured_at, kind, source, text} for every message the
    description quotes, in the order it quotes them; {} for a description that quotes none."""
    if not body:
        return {}
    text = body[: body.rfind(OPENER)] if OPENER in body else body
    lines = text.splitlines()
    found: list[dict[str, Any]] = [*_dream_quotes(lines), *_said_quotes(lines)]
    out: dict[str, dict[str, Any]] = {}
    conflicting: set[str] = set()
    for message in found:
        earlier = out.get(message["message_id"])
        if earlier is not None and earlier["text"] != message["text"]:
            conflicting.add(message["message_id"])
        out.setdefault(message["message_id"], message)
    return {key: value for key, value in out.items() if key not in conflicting}


def _dream_quotes(lines: list[str]) -> list[dict[str, Any]]:
    out = []
    for line in lines:
        if not (line.startswith("- `") and line.endswith('"')):
            continue  # also keeps the pattern's backtracking linear on a long line that is no quote
        match = _DREAM_QUOTE.fullmatch(line)
        if match is not None and match["kind"] in KINDS and _is_id(match["id"]):
            out.append(_message(match["id"], match["at"], match["kind"], match["source"], match["text"]))
    return out


def _said_quotes(lines: list[str]) -> list[dict[str, Any]]:
    """The block quotes under the last "What the user said" heading, up to the next heading."""
    starts = [i for i, line in enumerate(lines) if line == _SAID_HEADER]
    if not starts:
        return []
    out: list[dict[str, Any]] = []
    current: tuple[str, str] | None = None
    quoted: list[str] = []

    def close() -> None:
        if current is not None and quoted:
            out.append(_message(current[0], current[1], "user", None, "\n".join(quoted)))

    for line in lines[starts[-1] + 1:]:
        if line.startswith("#"):
            break
        header = _SAID_QUOTE.fullmatch(line)
        if header is not None and _is_id(header["id"]):
            close()
            current, quoted = (header["id"], header["at"]), []
        elif current is not None and (line == ">" or line.startswith("> ")):
            quoted.append(line[2:])
    close()
    return out


def _message(message_id: str, at: str, kind: str, source: str | None, text: str) -> dict[str, Any]:
    return {"message_id": message_id, "captured_at": _iso(at), "kind": kind, "source": source,
            "text": _unescape(text)}


def _iso(stamp: str) -> str:
    """The description's `2026-03-14 09:30:12 UTC` as `2026-03-14T09:30:12Z`, as transcripts write
    times; anything else as it is."""
    try:
        return datetime.strptime(stamp, _STAMP).strftime("%Y-%m-%dT%H:%M:%SZ")
    except ValueError:
        return stamp


def _unescape(text: str) -> str:
    """Undo `safe_text` (bot.pullrequest.render), which made the quote inert in markdown."""
    return plain_text(text)


def _is_id(value: str) -> bool:
    try:
        check_id(value, "message_id")
    except MemrepoError:
        return False
    return True
