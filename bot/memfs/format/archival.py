"""Archival memory, MemGPT's unbounded passage store, kept as ordinary external memory files.

`archival_memory_insert(content)` appends one dated, attributed entry to the archival file of
the current month, `archival/YYYY-MM.md` (then `archival/YYYY-MM-2.md`, ... once a file would
pass its size limit), so each passage is reviewable, searchable and blamed like any other
line, and core memory is never touched. An entry is a level-2 heading with the moment (UTC, to
the second) and the agent, an optional `Tags:` line, then the passage (a line of it shaped like a
heading, or a first line shaped like the tags line, is written with one more backslash in front
and read back without it):

    ## 2026-12-02 04:50:12 UTC · Ada (a1)
    Tags: travel, family

    The user's sister lives in Lyon.

In a v2 memory the folder has its `MEMORY.md` index, made with the first file and given a link
to each new file. Pure: the tool reads the files and commits what this returns.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from bot.memfs.format import document
from bot.memfs.format.layout import INDEX, V2

# ---------------------------------------------------------------- MemGPT's tools
# Archival memory (archival.py): file frontmatter, the v2 folder index and its links.
ARCHIVAL_NAME = "Archival {month}"
ARCHIVAL_DESCRIPTION = ("Archival memory: passages recorded with archival_memory_insert in {month}, one dated, "
                        "attributed entry each")
ARCHIVAL_INDEX = ("# Archival memory\n\nPassages recorded with archival_memory_insert, one file per month; "
                  "search them with archival_memory_search.\n\n")
ARCHIVAL_INDEX_LINK = "- [{name}]({file})"
ARCHIVAL_TOO_LARGE = ("this passage is {size} characters, more than the {limit} an archival file may hold; "
                      "split it into several inserts")

FOLDER = "archival"
INDEX_PATH = f"{FOLDER}/{INDEX}"
STAMP = "%Y-%m-%d %H:%M:%S UTC"
_FILE = re.compile(rf"{FOLDER}/(\d{{4}}-\d\d)(?:-(\d+))?\.md\Z")
_HEADING = re.compile(r"^## (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC) · (.+)$", re.MULTILINE)
# A passage's own line shaped like a heading gets one more backslash in front (markdown shows
# it as written), and loses one when read back, so no passage can split itself in two.
_ESCAPED = re.compile(r"^(\\*)(## \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC · )", re.MULTILINE)
_UNESCAPED = re.compile(r"^\\(\\*## \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC · )", re.MULTILINE)
_TAGS_ESCAPED = re.compile(r"\A(\\*)(Tags: )")  # likewise a passage's first line shaped like the tags line
_TAGS_UNESCAPED = re.compile(r"\A\\(\\*Tags: )")
_TAGS = "Tags: "


@dataclass(frozen=True)
class Entry:
    """One archived passage, as search returns it."""

    path: str
    line: int  # of its heading, 1-based
    timestamp: str
    author: str
    tags: tuple[str, ...]
    content: str


def is_archival(path: str) -> bool:
    return _FILE.match(path) is not None


def render_entry(content: str, when: datetime, author: str, tags: Sequence[str] = ()) -> str:
    """The text of one entry (ending in a newline); the passage's own blank edges trimmed."""
    head = f"## {when.astimezone(UTC).strftime(STAMP)} · {author}\n"
    tagged = f"{_TAGS}{', '.join(tags)}\n" if tags else ""
    passage = _TAGS_ESCAPED.sub(r"\\\1\2", _ESCAPED.sub(r"\\\1\2", content.strip("\n")))
    return f"{head}{tagged}\n{passage}\n"


def month_file(when: datetime) -> str:
    """The first archival file of the month `when` falls in."""
    return _file(when.astimezone(UTC).strftime("%Y-%m"), 1)


def _file(month: str, part: int) -> str:
    return f"{FOLDER}/{month}.md" if part == 1 else f"{FOLDER}/{month}-{part}.md"


def _new_file(month: str, part: int, layout: str) -> str:
    fields = {"description": ARCHIVAL_DESCRIPTION.format(month=month)}
    if layout == V2:
        fields = {"name": ARCHIVAL_NAME.format(month=month if part == 1 else f"{month} ({part})"), **fields}
    return document.letta_render(document.LettaDoc(fields, ""), _file(month, part), layout)


def plan_insert(files: Mapping[str, str], content: str, when: datetime, author: str, layout: str,
                limit: int | None, tags: Sequence[str] = ()) -> dict[str, str]:
    """New texts (path -> text) that record `content`: appended to the month's last file, or
    a new file when it would pass `limit` (characters; None: no limit). `files` holds the
    archival folder's files at HEAD (only the month's files and the index are read). A passage
    that cannot fit even in a new file is refused (ValueError with the message)."""
    month = when.astimezone(UTC).strftime("%Y-%m")
    entry = render_entry(content, when, author, tags)
    parts = sorted(int(m.group(2) or 1) for path in files if (m := _FILE.match(path)) and m.group(1) == month)
    part = parts[-1] if parts else 1
    path = _file(month, part)
    current = files.get(path)
    if current is not None:
        text = current + ("" if current.endswith("\n") or not current else "\n") + ("\n" if current.strip() else "")
        if limit is None or len(text) + len(entry) <= limit:
            return {path: text + entry}
        part += 1
        path = _file(month, part)
    text = _new_file(month, part, layout) + entry
    if limit is not None and len(text) > limit:
        raise ValueError(ARCHIVAL_TOO_LARGE.format(size=len(entry), limit=limit))
    out = {path: text}
    if layout == V2:
        index = files.get(INDEX_PATH) or ARCHIVAL_INDEX
        name = path.removeprefix(FOLDER + "/")
        link = ARCHIVAL_INDEX_LINK.format(name=name.removesuffix(".md"), file=name)
        out[INDEX_PATH] = index + ("" if index.endswith("\n") else "\n") + link + "\n"
    return out


def _is_moment(stamp: str) -> bool:
    try:
        datetime.strptime(stamp, STAMP)
    except ValueError:
        return False
    return True


def entries(path: str, text: str) -> list[Entry]:
    """The entries of one archival file, in file order. A heading whose moment is no date (a
    person's slip, `2026-13-45`) starts no entry: its lines stay with the entry before."""
    found = [match for match in _HEADING.finditer(text) if _is_moment(match.group(1))]
    out = []
    for i, match in enumerate(found):
        end = found[i + 1].start() if i + 1 < len(found) else len(text)
        lines = text[match.end():end].strip("\n").split("\n")
        tags: tuple[str, ...] = ()
        if lines and lines[0].startswith(_TAGS):
            tags = tuple(t.strip() for t in lines[0][len(_TAGS):].split(",") if t.strip())
            lines = lines[1:]
        line = text.count("\n", 0, match.start()) + 1
        content = _TAGS_UNESCAPED.sub(r"\1", _UNESCAPED.sub(r"\1", "\n".join(lines).strip("\n")))
        out.append(Entry(path, line, match.group(1), match.group(2), tags, content))
    return out
