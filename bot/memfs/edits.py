"""What each memory tool command does to text: pure functions from old content to new.

The shell (`tool.py`) reads HEAD, calls these, validates the result and commits it; keeping
the text edits here lets them be tested by tables and properties without git.
"""

from __future__ import annotations

from bot import messages
from bot.errors import MemrepoError
from bot.memfs import document


def numbered(text: str, view_range: tuple[int, int] | None = None) -> str:
    """The text with 1-based line numbers, as Anthropic's `view` shows files."""
    lines = text.splitlines()
    start, end = 1, len(lines)
    if view_range is not None:
        start, end = view_range
        if end == -1:
            end = len(lines)
        if start < 1 or start > max(len(lines), 1) or end < start or end > len(lines):
            raise MemrepoError(messages.VIEW_RANGE.format(start=start, end=end, count=len(lines)))
    return "\n".join(f"{n:6d}\t{lines[n - 1]}" for n in range(start, end + 1))


def created(file_text: str, description: str | None) -> str:
    """A new file's text: Letta passes a description and a body, Anthropic a whole file."""
    if description is None:
        return file_text
    if not description.strip():
        raise MemrepoError(messages.EMPTY_DESCRIPTION_ARG)
    if file_text.lstrip().startswith("---"):
        raise MemrepoError(messages.CREATE_BOTH_DESCRIPTIONS)
    return document.render({"description": description.strip()}, file_text)


def replaced(text: str, old: str, new: str, path: str) -> str:
    """Replace the one occurrence of `old`. Zero or several matches are refused with the
    count (Anthropic's rule): replacing "the first" of several silently edits a place the
    agent may not have meant."""
    if old == "":
        raise MemrepoError(messages.REPLACE_EMPTY.format(path=path))
    count = text.count(old)
    if count == 0:
        raise MemrepoError(messages.REPLACE_NONE.format(path=path))
    if count > 1:
        raise MemrepoError(messages.REPLACE_MANY.format(path=path, count=count))
    return text.replace(old, new, 1)


def inserted(text: str, line: int, insert_text: str, path: str) -> str:
    """Insert after line `line` (0: at the top, -1: at the end), Anthropic's numbering."""
    lines = text.splitlines(keepends=True)
    if line == -1:
        line = len(lines)
    if line < 0 or line > len(lines):
        raise MemrepoError(messages.INSERT_RANGE.format(path=path, line=line, count=len(lines)))
    if lines and not lines[-1].endswith("\n") and line == len(lines):
        lines[-1] += "\n"
    block = insert_text if insert_text.endswith("\n") else insert_text + "\n"
    return "".join(lines[:line]) + block + "".join(lines[line:])


def appended(text: str, content: str) -> str:
    """MemGPT's core_memory_append: a new line at the end of the block."""
    base = text if text.endswith("\n") or not text else text + "\n"
    return base + content.rstrip("\n") + "\n"


def with_description(text: str, description: str, path: str) -> str:
    if not description.strip():
        raise MemrepoError(messages.EMPTY_DESCRIPTION_ARG)
    try:
        return document.with_description(text, description.strip())
    except document.DocumentError as exc:
        raise MemrepoError(messages.DESCRIPTION_UNPARSABLE.format(path=path, problem=exc)) from None
