"""What each memory tool command does to text: pure functions from old content to new.

The shell (`tool.py`) reads HEAD, calls these, validates the result and commits it; keeping
the text edits here lets them be tested by tables and properties without git.
"""

from __future__ import annotations

from collections.abc import Callable

from bot.errors import MemrepoError
from bot.memfs.format import document
from bot.memfs.format.layout import V2, is_index

VIEW_RANGE = "view_range [{start}, {end}] is outside the file's {count} lines"
EMPTY_DESCRIPTION_ARG = "'description' must not be empty: say in a few words what the file holds"
REPLACE_NONE = (
    "old_str was not found in {path} (0 matches); view the file and copy the exact text, "
    "whitespace included"
)
REPLACE_MANY = (
    "old_str matches {count} places in {path}; include more surrounding text so that it "
    "matches exactly one"
)
INSERT_RANGE = (
    "insert_line {line} is outside {path}, which has {count} lines; use 0 for the top, "
    "N to insert after line N, or -1 for the end"
)
DESCRIPTION_UNPARSABLE = "cannot update the description of {path}: {problem}"


def numbered(text: str, view_range: tuple[int, int] | None = None) -> str:
    """The text with 1-based line numbers, as Anthropic's `view` shows files."""
    lines = text.splitlines()
    start, end = 1, len(lines)
    if view_range is not None:
        start, end = view_range
        if end == -1:
            end = len(lines)
        if start < 1 or start > max(len(lines), 1) or end < start or end > len(lines):
            raise MemrepoError(VIEW_RANGE.format(start=start, end=end, count=len(lines)))
    return "\n".join(f"{n:6d}\t{lines[n - 1]}" for n in range(start, end + 1))


def replaced(text: str, old: str, new: str, path: str) -> str:
    """Replace the one occurrence of `old`. Zero or several matches are refused with the
    count (Anthropic's rule): replacing "the first" of several silently edits a place the
    agent may not have meant."""
    if old == "":
        raise MemrepoError(f"old_str is empty; give the exact text to replace in {path}")
    count = text.count(old)
    if count == 0:
        raise MemrepoError(REPLACE_NONE.format(path=path))
    if count > 1:
        raise MemrepoError(REPLACE_MANY.format(path=path, count=count))
    return text.replace(old, new, 1)


def inserted(text: str, line: int, insert_text: str, path: str) -> str:
    """Insert after line `line` (0: at the top, -1: at the end), Anthropic's numbering."""
    lines = text.splitlines(keepends=True)
    if line == -1:
        line = len(lines)
    if line < 0 or line > len(lines):
        raise MemrepoError(INSERT_RANGE.format(path=path, line=line, count=len(lines)))
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
        raise MemrepoError(EMPTY_DESCRIPTION_ARG)
    try:
        return document.with_description(text, description.strip())
    except document.DocumentError as exc:
        raise MemrepoError(DESCRIPTION_UNPARSABLE.format(path=path, problem=exc)) from None


# ---------------------------------------------------------------- Letta-spelled calls
# Letta's tool edits a file's body and re-renders its frontmatter; these do the same, byte for
# byte (document.letta_render), in both layouts. One deliberate difference: a str_replace whose
# text matches several places is refused with the count, as above, instead of replacing the
# first. A v1 file Letta's tool cannot read (external memory may have no frontmatter) is edited
# as it is, its frontmatter (if any) kept.


def _letta_read(text: str, path: str, layout: str) -> document.LettaDoc | None:
    try:
        return document.letta_parse(text, path, layout)
    except document.DocumentError as exc:
        if layout == V2:
            raise MemrepoError(str(exc)) from None
        return None


def _letta_write(doc: document.LettaDoc, path: str, layout: str) -> str:
    try:
        return document.letta_render(doc, path, layout)
    except document.DocumentError as exc:
        raise MemrepoError(str(exc)) from None


def _body_edit(text: str, path: str, layout: str, edit: Callable[[str], str]) -> str:
    doc = _letta_read(text, path, layout)
    if doc is not None:
        return _letta_write(doc.with_body(edit(doc.body)), path, layout)
    try:
        _, body = document.split(text)
    except document.DocumentError:
        return edit(text)
    return text[: len(text) - len(body)] + edit(body)


def letta_created(path: str, description: str | None, file_text: str, layout: str) -> str:
    """Letta's create: frontmatter from `description` (v2: and a name from the file name)
    over `file_text` as it is; a v2 MEMORY.md is all body."""
    if layout == V2 and is_index(path):
        return _letta_write(document.LettaDoc({}, file_text, index=True), path, layout)
    if description is None or not description.strip():
        raise MemrepoError(EMPTY_DESCRIPTION_ARG)
    if file_text.removeprefix(document.BOM).lstrip().startswith("---"):
        raise MemrepoError("give either 'description' or a file_text that starts with its own frontmatter, not both")
    fields = {"name": document.default_name(path)} if layout == V2 else {}
    return _letta_write(document.LettaDoc({**fields, "description": description}, file_text), path, layout)


def letta_replaced(text: str, old: str, new: str, path: str, layout: str) -> str:
    """Letta's str_replace: in the body only, where exactly one place must match."""
    return _body_edit(text, path, layout, lambda body: replaced(body, old, new, path))


def letta_inserted(text: str, line: int, insert_text: str, path: str, layout: str) -> str:
    """Letta's insert: `line` counts the body's lines from 1 and the text goes before that
    line, clamped to the body's ends (so 1 and anything lower is the top, a line past the end
    the end); the body is split and joined on newlines, as Letta does."""
    def insert(body: str) -> str:
        lines = body.split("\n") if body else []
        at = min(max(line - 1, 0), len(lines))
        return "\n".join(lines[:at] + insert_text.split("\n") + lines[at:])

    return _body_edit(text, path, layout, insert)


def letta_with_description(text: str, description: str, path: str, layout: str) -> str:
    """Letta's update_description: the new description, the body as it was."""
    if layout == V2 and is_index(path):
        raise MemrepoError("MEMORY.md has no frontmatter")
    if not description.strip():
        raise MemrepoError(EMPTY_DESCRIPTION_ARG)
    doc = _letta_read(text, path, layout)
    if doc is None:
        return with_description(text, description, path)
    return _letta_write(doc.with_description(description), path, layout)
