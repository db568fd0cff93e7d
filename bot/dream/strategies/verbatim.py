"""The verbatim strategy (default, no LLM): what the user said, word for word, with its date.

Only messages of kind `user` whose source is `user` are recorded (never assistant text,
tool output or external content). Each becomes a record

    ### 2026-03-14T09:30:12.123456Z · m_01HV...

    > the message, every line quoted

in `conversations/<conversation-id>/<YYYY-MM>.md` (month of the store's `captured_at`, UTC;
a date written in the message is never used). Records are only ever appended: a statement
that supersedes an earlier one stands beside it with its own date, and nothing earlier is
rewritten (memory that keeps only the current value cannot answer questions about the past).
When a month's file would exceed `limits.file_chars`, records continue in
`<YYYY-MM>-part-<N>.md`; a single message too long for one file is split into pieces.

In a v2 memory (root MEMORY.md) the files carry v2's frontmatter (name and description), and
`conversations/` and each conversation's folder get their MEMORY.md index the first time, each
index a list of links to what it holds (a link is added with each new file).

The planner is pure (texts in, memory tool calls out), so every rule is tested by table.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from bot.dream.strategies import DreamInput, Proposal, ProposedCall
from bot.errors import MemrepoError
from bot.memfs import V1, V2, document, edits
from bot.memfs import layout as layouts
from bot.texts import Text
from bot.transcript.model import Message

# The verbatim strategy: the records it writes into memory, and its pull request's words.
DREAM_VERBATIM_DESCRIPTION = (
    "What the user said in conversation {conversation} during {month}, verbatim, each with the time it was "
    "captured (UTC) and its message id"
)
DREAM_VERBATIM_TITLE = "What the user said in conversation {conversation}, {month}"
DREAM_VERBATIM_PART = " (part {part})"
DREAM_VERBATIM_INDEX_TOP = ("# Conversations\n\nWhat the user said, word for word, one folder per conversation; "
                            "each folder's MEMORY.md lists its months.\n\n")
DREAM_VERBATIM_INDEX = "# Conversation {conversation}\n\nWhat the user said in it, word for word, by month:\n\n"
DREAM_VERBATIM_INDEX_LINK = "- [{name}]({file})\n"
DREAM_VERBATIM_TOO_SMALL = (
    "limits.file_chars ({limit}) leaves no room for a record in a new file; raise it in .memrepo/config.yml"
)
DREAM_VERBATIM_NOTHING = Text("no new statements by the user in {count:|message|messages}")
DREAM_VERBATIM_CREATE = Text(
    "Record {count:|statement|statements} by the user, verbatim with their dates, in a new {path}"
)
DREAM_VERBATIM_APPEND = Text(
    "Record {count:|more statement|more statements} by the user, verbatim with their dates, in {path}"
)
DREAM_VERBATIM_SUMMARY = Text(
    "Recorded {count:|statement|statements} the user made in conversation {conversation} (of "
    "{window:|new message|new messages}), "
    "from {first:when} to {last:when}, word for word with the time each was captured and its message id, in {paths}. "
    "Earlier records are kept as they were: a statement that changes an earlier one stands beside it with its "
    "own date."
)

NAME = "verbatim"
FOLDER = "conversations"
_MIN_ROOM = 64  # characters a part file must have left for records, else the limit is too small


def selected(window: Sequence[Message]) -> list[Message]:
    """The user's own statements: kind user, source user."""
    return [m for m in window if m.kind == "user" and m.source == "user"]


def month_of(message: Message) -> str:
    return message.captured_at[:7]


def part_path(conversation_id: str, month: str, part: int) -> str:
    suffix = "" if part == 1 else f"-part-{part}"
    return f"{FOLDER}/{conversation_id}/{month}{suffix}.md"


def _part_pattern(conversation_id: str, month: str) -> re.Pattern[str]:
    return re.compile(rf"{re.escape(FOLDER)}/{re.escape(conversation_id)}/{re.escape(month)}"
                      r"(?:-part-(?P<n>[1-9][0-9]*))?\.md")


def quote(text: str) -> str:
    """Every line of `text` as a markdown quote line (an empty line is a bare `>`)."""
    return "\n".join(f"> {line}" if line else ">" for line in text.split("\n"))


def record(message: Message, text: str | None = None, piece: tuple[int, int] | None = None) -> str:
    """One record, starting with a blank line and ending with a newline."""
    where = f" (piece {piece[0]} of {piece[1]})" if piece else ""
    body = quote(message.text if text is None else text)
    return f"\n### {message.captured_at} · {message.message_id}{where}\n\n{body}\n"


def empty_part(conversation_id: str, month: str, part: int, layout: str = V1) -> str:
    """A new month file: frontmatter with a description (v2: and a name), and a title."""
    description = DREAM_VERBATIM_DESCRIPTION.format(conversation=conversation_id, month=month)
    title = DREAM_VERBATIM_TITLE.format(conversation=conversation_id, month=month)
    if part > 1:
        description += DREAM_VERBATIM_PART.format(part=part)
        title += DREAM_VERBATIM_PART.format(part=part)
    if layout == V2:
        name = f"What the user said, {month}" + (
            DREAM_VERBATIM_PART.format(part=part) if part > 1 else "")
        fields = {"name": name, "description": description}
        return document.letta_render(document.LettaDoc(fields, f"# {title}\n"), part_path(conversation_id, month, part),
                                     V2)
    return document.render({"description": description}, f"# {title}\n")


def _pieces(message: Message, room: int) -> list[str]:
    """The records of one message, each at most `room` characters. A message whose record
    does not fit in an empty part file is cut into pieces of its text (joined without
    separators, they give the message back exactly)."""
    whole = record(message)
    if len(whole) <= room:
        return [whole]
    budget = room - len(record(message, "", (999999, 999999))) + 1  # +1: the empty quote's ">"
    if budget < 3:
        raise MemrepoError(DREAM_VERBATIM_TOO_SMALL.format(limit=room))
    text = message.text
    chunks: list[str] = []
    start = 0
    while start < len(text):
        lo, hi = start + 1, min(len(text), start + budget)
        while lo < hi:  # the longest piece whose quoted form fits (quoting only grows with length)
            mid = (lo + hi + 1) // 2
            if len(quote(text[start:mid])) <= budget:
                lo = mid
            else:
                hi = mid - 1
        chunks.append(text[start:lo])
        start = lo
    total = len(chunks)
    return [record(message, chunk, (i, total)) for i, chunk in enumerate(chunks, 1)]


@dataclass
class _File:
    path: str
    text: str
    existing: bool
    start: str  # the text as it was at the base commit ("" for a new file)
    message_ids: list[str] = field(default_factory=list)


def plan(window: Sequence[Message], conversation_id: str, files: Mapping[str, str], file_chars: int,
         layout: str = V1) -> Proposal:
    """The memory tool calls that record the user's statements in `window` (a statement
    already recorded in one of the conversation's files is not recorded twice); `files` holds
    the conversation's files (and, in v2, the indexes above them)."""
    recorded = "".join(files.values())
    statements = [m for m in selected(window) if f"· {m.message_id}\n" not in recorded
                  and f"· {m.message_id} (piece " not in recorded]
    if not statements:
        return Proposal((), DREAM_VERBATIM_NOTHING.format(count=len(window)), None)
    months: dict[str, list[Message]] = {}
    for message in statements:
        months.setdefault(month_of(message), []).append(message)
    touched: list[_File] = []
    room = file_chars - len(empty_part(conversation_id, "0000-00", 10**6, layout))
    if room < _MIN_ROOM:
        raise MemrepoError(DREAM_VERBATIM_TOO_SMALL.format(limit=file_chars))
    for month in sorted(months):
        pattern = _part_pattern(conversation_id, month)
        parts = {int(m.group("n") or 1): path for path in files if (m := pattern.fullmatch(path))}
        number = max(parts) if parts else 1
        current = _File(parts[number], files[parts[number]], True, files[parts[number]]) if parts else \
            _File(part_path(conversation_id, month, number), empty_part(conversation_id, month, number, layout),
                  False, "")
        for message in months[month]:
            for piece in _pieces(message, room):
                if len(_appended(current.text, piece)) > file_chars and (current.message_ids or current.existing):
                    if current.message_ids:
                        touched.append(current)
                    number += 1
                    current = _File(part_path(conversation_id, month, number),
                                    empty_part(conversation_id, month, number, layout), False, "")
                current.text = _appended(current.text, piece)
                if message.message_id not in current.message_ids:
                    current.message_ids.append(message.message_id)
        if current.message_ids:
            touched.append(current)
    calls = tuple(_call(f) for f in touched)
    if layout == V2:
        calls = _indexed(calls, touched, conversation_id, files)
    paths = ", ".join(f.path for f in touched)
    summary = DREAM_VERBATIM_SUMMARY.format(
        count=len(statements), conversation=conversation_id, first=statements[0].captured_at,
        last=statements[-1].captured_at, paths=paths, window=len(window))
    return Proposal(calls, summary, None)


def _indexed(calls: tuple[ProposedCall, ...], touched: Sequence[_File], conversation_id: str,
             files: Mapping[str, str]) -> tuple[ProposedCall, ...]:
    """v2: the calls with the indexes they need first (`conversations/MEMORY.md`, linking each
    conversation's index, and the conversation's own, linking its files) and a link in the
    conversation's index to each new file."""
    new = [f for f in touched if not f.existing]
    if not new:
        return calls
    ids = tuple(dict.fromkeys(i for f in new for i in f.message_ids))
    top, own = f"{FOLDER}/{layouts.INDEX}", f"{FOLDER}/{conversation_id}/{layouts.INDEX}"
    names = [f.path.rsplit("/", 1)[1] for f in new]
    links = "".join(DREAM_VERBATIM_INDEX_LINK.format(name=name, file=name) for name in names)
    if own in files:
        return (*calls, _index_call(own, links, ids, exists=True))
    folder_link = DREAM_VERBATIM_INDEX_LINK.format(name=conversation_id,
                                                         file=f"{conversation_id}/{layouts.INDEX}")
    first = (_index_call(top, DREAM_VERBATIM_INDEX_TOP + folder_link, ids, exists=False) if top not in files
             else _index_call(top, folder_link, ids, exists=True))
    own_text = DREAM_VERBATIM_INDEX.format(conversation=conversation_id) + links
    return (first, _index_call(own, own_text, ids, exists=False), *calls)


def _index_call(path: str, text: str, ids: tuple[str, ...], *, exists: bool) -> ProposedCall:
    """A v2 index made with `text`, or `text` (links) added at its end."""
    if exists:
        summary = f"Link what is new from {path}"
        call = {"command": "insert", "path": path, "insert_line": -1, "insert_text": text.rstrip("\n")}
    else:
        summary = f"Index {path}: the folder a v2 memory needs before the records it lists"
        call = {"command": "create", "path": path, "file_text": text}
    return ProposedCall({**call, "reason": summary}, summary, ids)


def _appended(text: str, block: str) -> str:
    """What `insert` at the end does (the same pure edit the memory tool applies)."""
    return edits.inserted(text, -1, block, "")


def _call(f: _File) -> ProposedCall:
    count = len(f.message_ids)
    if f.existing:
        block = f.text[len(f.start if f.start.endswith("\n") else f.start + "\n"):]
        call = {"command": "insert", "path": f.path, "insert_line": -1, "insert_text": block}
        summary = DREAM_VERBATIM_APPEND.format(count=count, path=f.path)
    else:
        call = {"command": "create", "path": f.path, "file_text": f.text}
        summary = DREAM_VERBATIM_CREATE.format(count=count, path=f.path)
    call["reason"] = summary
    return ProposedCall(call, summary, tuple(f.message_ids))


class VerbatimStrategy:
    name = NAME

    def propose(self, dream: DreamInput) -> Proposal:
        prefix = f"{FOLDER}/{dream.conversation_id}/"
        files = {p: t for p, t in dream.files.items() if p.startswith(prefix) or p == f"{FOLDER}/{layouts.INDEX}"}
        return plan(dream.messages, dream.conversation_id, files, dream.policy.limits.file_chars,
                    layouts.of(dream.files))
