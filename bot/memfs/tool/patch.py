"""The `memory_apply_patch` envelope: parse it, then apply it to file contents.

Pure on purpose: the caller normalises and checks paths, reads files at HEAD and validates
the result, so every rule here is tested by table without git. Matching is exact (no fuzz):
a patch that does not fit the file is refused with the lines it looked for, which an agent
can act on, rather than applied somewhere it did not mean.

    *** Begin Patch
    *** Add File: path          then '+line' lines
    *** Update File: path
    *** Move to: new/path       optional
    @@ optional heading         then ' context', '-removed', '+added' lines; more hunks may follow
    *** End of File             optional, after a hunk: it must match at the end of the file
    *** Delete File: path
    *** End Patch
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from bot.errors import MemrepoError

# apply_patch.
PATCH_EMPTY = "the patch is empty; it must start with '*** Begin Patch' and end with '*** End Patch'"
PATCH_EXPECTED = "line {line}: expected {expected}, found {found}"
PATCH_EXPECT_SECTION = "'*** Add File:', '*** Update File:', '*** Delete File:' or '*** End Patch'"
PATCH_EXPECT_ADD_LINE = "a line starting with '+' (the text of the new file {path})"
PATCH_EXPECT_HUNK_LINE = (
    "a hunk line (' ' context, '-' removed, '+' added), an '@@' line or a '***' line"
)
PATCH_NO_FILES = (
    "the patch changes no files; add '*** Add File:', '*** Update File:' or '*** Delete File:' sections"
)
PATCH_NO_HUNKS = (
    "line {line}: '*** Update File: {path}' changes nothing; add a hunk ('@@', then ' context', "
    "'-removed' and '+added' lines) or a '*** Move to:' line"
)
PATCH_MOVE_MISPLACED = "line {line}: '*** Move to:' must come right after an '*** Update File:' line"
PATCH_EOF_MISPLACED = "line {line}: '*** End of File' must end a hunk of an '*** Update File:' section"
PATCH_HUNK_EMPTY = (
    "line {line}: this hunk has no lines; give ' context', '-removed' and '+added' lines after '@@'"
)
PATCH_HUNK_NO_CHANGE = "line {line}: this hunk changes nothing (it has no '-' or '+' lines)"
PATCH_SAME_PATH = (
    "line {line}: {path} is already changed by the section at line {first}; "
    "put all changes to one file in one section"
)
PATCH_TWICE = "{path}: the patch changes this file twice; put all changes to one file in one section"
PATCH_ADD_EXISTS = (
    "{path}: cannot add the file, it already exists; use '*** Update File: {path}' to change it"
)
PATCH_UPDATE_MISSING = (
    "{path}: cannot update the file, it does not exist; use '*** Add File: {path}' to create it"
)
PATCH_MOVE_EXISTS = "{path}: cannot move the file to {move_to}, which already exists"
PATCH_HEADER_MISSING = (
    "{path}: hunk {hunk} (patch line {line}) names '@@ {header}', but no line{where} contains that text"
)
PATCH_NO_MATCH = (
    "{path}: hunk {hunk} (patch line {line}) does not match the file{where}; it looked for:\n{lines}"
)
PATCH_AMBIGUOUS = (
    "{path}: hunk {hunk} (patch line {line}) matches {count} places in the file{where}; add context "
    "lines, or an '@@' line with the heading above the change. It looked for:\n{lines}"
)
PATCH_NOT_AT_END = (
    "{path}: hunk {hunk} (patch line {line}) is marked '*** End of File' but does not match the end "
    "of the file; it looked for:\n{lines}"
)

BEGIN = "*** Begin Patch"
END = "*** End Patch"
ADD = "*** Add File:"
UPDATE = "*** Update File:"
DELETE = "*** Delete File:"
MOVE = "*** Move to:"
END_OF_FILE = "*** End of File"  # not said: apply_patch's marker, matched in a patch

# A unified-diff hunk header ("@@ -3,4 +3,5 @@ heading"): the numbers are ignored, the heading kept.
_UNIFIED_HEADER = re.compile(r"@@\s*-[0-9]+(?:,[0-9]+)?\s+\+[0-9]+(?:,[0-9]+)?\s*@@(.*)")
_SHOWN_LINES = 5
_SHOWN_CHARS = 60

Kind = Literal["add", "update", "delete"]


class PatchError(MemrepoError):
    """The patch is malformed or does not fit the files; the message says where and why."""


@dataclass
class Hunk:
    """One change inside a file: `lines` are (tag, text) with tag ' ', '-' or '+'."""

    header: str | None = None
    lines: list[tuple[str, str]] = field(default_factory=list)
    at_eof: bool = False
    line: int = 0  # where the hunk starts in the patch text, for messages

    @property
    def old(self) -> list[str]:
        """The lines the hunk expects to find (context and removed)."""
        return [text for tag, text in self.lines if tag != "+"]

    @property
    def new(self) -> list[str]:
        """The lines that replace them (context and added)."""
        return [text for tag, text in self.lines if tag != "-"]


@dataclass
class FileOp:
    """One section of a patch. Mutable so the caller can normalise `path` and `move_to`."""

    kind: Kind
    path: str
    move_to: str | None = None
    hunks: list[Hunk] = field(default_factory=list)
    text: str | None = None  # the content of an added file
    line: int = 0  # where the section starts in the patch text, for messages


# ------------------------------------------------------------------------------ parsing


def _found(text: str | None) -> str:
    if text is None:
        return "the end of the patch"
    if len(text) > _SHOWN_CHARS:
        text = text[:_SHOWN_CHARS] + "..."
    return repr(text)


def _expected(line: int, expected: str, found: str | None) -> PatchError:
    return PatchError(PATCH_EXPECTED.format(line=line, expected=expected, found=_found(found)))


def _marker(text: str) -> str | None:
    """The marker a line starts (its text without trailing blanks), or None for body lines.

    Only lines starting with '***' are markers, so a body line whose text happens to read
    like a marker (' *** End Patch', '+*** End Patch') stays body.
    """
    return text.rstrip() if text.startswith("***") else None


def _path_after(text: str, marker: str, line: int) -> str:
    path = text[len(marker) :].strip()
    if not path:
        raise PatchError(f"line {line}: '{marker}' needs a file path after the colon")
    return path


def _header(text: str) -> str | None:
    """The heading of an '@@' line; None when it has none ('@@' or a bare unified header)."""
    unified = _UNIFIED_HEADER.fullmatch(text.rstrip())
    heading = unified.group(1) if unified else text[2:]
    heading = heading.strip()
    return heading or None


class _Reader:
    """The patch's lines with 1-based numbers, as the original text numbers them."""

    def __init__(self, text: str) -> None:
        self.lines = text.split("\n")
        if self.lines and self.lines[-1] == "":
            self.lines.pop()
        self.index = 0

    @property
    def number(self) -> int:
        return self.index + 1

    def peek(self) -> str | None:
        return self.lines[self.index] if self.index < len(self.lines) else None

    def take(self) -> str:
        text = self.lines[self.index]
        self.index += 1
        return text

    def skip_blank(self) -> None:
        while (text := self.peek()) is not None and not text.strip():
            self.index += 1


def _body(reader: _Reader) -> list[tuple[int, str]]:
    """The lines of a section up to the next marker, without its trailing bare blank lines.

    A bare empty line inside a body stands for an empty line (editors and models drop the
    leading space of ' '); at the end of a body it is just spacing between sections.
    """
    body: list[tuple[int, str]] = []
    while (text := reader.peek()) is not None and _marker(text) is None:
        body.append((reader.number, text))
        reader.take()
    while body and body[-1][1] in ("", "\r"):
        body.pop()
    return body


def _parse_add(reader: _Reader, path: str) -> str:
    body = _body(reader)
    while body and not body[-1][1].strip():
        body.pop()
    lines: list[str] = []
    for number, text in body:
        if not text.strip():
            lines.append("")
        elif text.startswith("+"):
            lines.append(text[1:])
        else:
            raise _expected(number, PATCH_EXPECT_ADD_LINE.format(path=path), text)
    return "".join(line + "\n" for line in lines)


def _parse_hunks(reader: _Reader) -> list[Hunk]:
    hunks: list[Hunk] = []
    while True:
        body = _body(reader)
        for number, text in body:
            if text.startswith("@@"):
                hunks.append(Hunk(header=_header(text), line=number))
                continue
            if text in ("", "\r"):
                tag, rest = " ", ""
            elif text[0] in " -+":
                tag, rest = text[0], text[1:]
            else:
                raise _expected(number, PATCH_EXPECT_HUNK_LINE, text)
            if not hunks or hunks[-1].at_eof:  # the first hunk may leave out its '@@' line
                hunks.append(Hunk(line=number))
            hunks[-1].lines.append((tag, rest))
        following = reader.peek()
        if following is None or _marker(following) != END_OF_FILE:
            break
        if not hunks or hunks[-1].at_eof:
            raise PatchError(PATCH_EOF_MISPLACED.format(line=reader.number))
        if not hunks[-1].lines:
            raise PatchError(PATCH_HUNK_EMPTY.format(line=hunks[-1].line))
        hunks[-1].at_eof = True
        reader.take()
    for hunk in hunks:
        if not hunk.lines:
            raise PatchError(PATCH_HUNK_EMPTY.format(line=hunk.line))
        if all(tag == " " for tag, _ in hunk.lines):
            raise PatchError(PATCH_HUNK_NO_CHANGE.format(line=hunk.line))
    return hunks


def parse_patch(text: str) -> list[FileOp]:
    """The file operations of a patch, in order; PatchError names the line that is wrong.

    Blank lines are allowed around the envelope and between sections, and markers may carry
    trailing blanks; everything else is strict, so a mistake is reported where it is made.
    """
    if not text.strip():
        raise PatchError(PATCH_EMPTY)
    reader = _Reader(text)
    reader.skip_blank()
    first = reader.peek()
    if first is None or _marker(first) != BEGIN:
        raise _expected(reader.number, "'*** Begin Patch'", first)
    reader.take()
    ops: list[FileOp] = []
    seen: dict[str, int] = {}
    while True:
        reader.skip_blank()
        number, current = reader.number, reader.peek()
        mark = None if current is None else _marker(current)
        if current is None or mark is None:
            raise _expected(number, PATCH_EXPECT_SECTION, current)
        if mark == END:
            reader.take()
            break
        reader.take()
        if mark.startswith(ADD):
            path = _path_after(mark, ADD, number)
            op = FileOp("add", path, text=_parse_add(reader, path), line=number)
        elif mark.startswith(DELETE):
            op = FileOp("delete", _path_after(mark, DELETE, number), line=number)
            reader.skip_blank()
            extra = reader.peek()
            if extra is not None and _marker(extra) is None:
                raise _expected(reader.number, "the next '***' line ('*** Delete File:' takes no lines)", extra)
        elif mark.startswith(UPDATE):
            op = FileOp("update", _path_after(mark, UPDATE, number), line=number)
            following = reader.peek()
            if following is not None and (_marker(following) or "").startswith(MOVE):
                op.move_to = _path_after(_marker(following) or "", MOVE, reader.number)
                reader.take()
            op.hunks = _parse_hunks(reader)
            if not op.hunks and op.move_to is None:
                raise PatchError(PATCH_NO_HUNKS.format(line=number, path=op.path))
        elif mark.startswith(MOVE):
            raise PatchError(PATCH_MOVE_MISPLACED.format(line=number))
        elif mark == END_OF_FILE:
            raise PatchError(PATCH_EOF_MISPLACED.format(line=number))
        else:
            raise _expected(number, PATCH_EXPECT_SECTION, current)
        for path in _touched(op):
            if path in seen:
                raise PatchError(PATCH_SAME_PATH.format(line=number, path=path, first=seen[path]))
            seen[path] = number
        ops.append(op)
    reader.skip_blank()
    if reader.peek() is not None:
        raise _expected(reader.number, "nothing after '*** End Patch'", reader.peek())
    if not ops:
        raise PatchError(PATCH_NO_FILES)
    return ops


def _touched(op: FileOp) -> list[str]:
    if op.move_to is not None and op.move_to != op.path:
        return [op.path, op.move_to]
    return [op.path]


# ----------------------------------------------------------------------------- applying


def _split(text: str) -> tuple[list[str], bool]:
    """Lines split on '\\n' only, and whether the text ends with one (an empty text counts
    as ending with one, so lines added to an empty file end with a newline)."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
        return lines, True
    return lines, False


def _join(lines: list[str], newline_at_end: bool) -> str:
    return "\n".join(lines) + ("\n" if newline_at_end and lines else "")


def _looked_for(old: list[str]) -> str:
    shown = [f"    |{text}" for text in old[:_SHOWN_LINES]]
    if len(old) > _SHOWN_LINES:
        shown.append(f"    ... and {len(old) - _SHOWN_LINES} more lines")
    return "\n".join(shown)


def _apply_hunks(path: str, text: str, hunks: list[Hunk]) -> str:
    """Apply hunks in order; each is searched from where the previous one ended."""
    lines, newline_at_end = _split(text)
    position = 0
    for number, hunk in enumerate(hunks, 1):
        old, new = hunk.old, hunk.new
        start = position
        where = f" after hunk {number - 1}" if number > 1 else ""
        if hunk.header is not None:
            found = next((i for i in range(position, len(lines)) if hunk.header in lines[i]), None)
            if found is None:
                raise PatchError(PATCH_HEADER_MISSING.format(
                    path=path, hunk=number, line=hunk.line, header=hunk.header, where=where))
            # The heading line itself may open the hunk's context (models often repeat it).
            start = found
            where = f" after the line containing '{hunk.header}'"
        fmt = dict(path=path, hunk=number, line=hunk.line, where=where, lines=_looked_for(old))
        if hunk.at_eof:
            at = len(lines) - len(old)
            if at < start or lines[at:] != old:
                raise PatchError(PATCH_NOT_AT_END.format(**fmt))
            matches = [at]
        elif not old:
            # Only added lines: after the heading line if there is one, else at the end.
            matches = [start + 1 if hunk.header is not None else len(lines)]
        else:
            matches = [
                i for i in range(start, len(lines) - len(old) + 1) if lines[i : i + len(old)] == old
            ]
        if not matches:
            raise PatchError(PATCH_NO_MATCH.format(**fmt))
        if len(matches) > 1 and hunk.header is None:
            raise PatchError(PATCH_AMBIGUOUS.format(count=len(matches), **fmt))
        at = matches[0]
        lines[at : at + len(old)] = new
        position = at + len(new)
    return _join(lines, newline_at_end)


def apply_patch(ops: list[FileOp], read: Callable[[str], str | None]) -> dict[str, str | None]:
    """The new content of every path the patch touches (None: deleted), in patch order.

    `read(path)` gives a file's current text or None when it does not exist. Nothing is
    written here: either every operation fits and the whole result is returned, or
    PatchError is raised and the caller changes nothing.
    """
    result: dict[str, str | None] = {}
    for op in ops:
        for path in _touched(op):
            if path in result:
                raise PatchError(PATCH_TWICE.format(path=path))
            result[path] = None
        current = read(op.path)
        if op.kind == "add":
            if current is not None:
                raise PatchError(PATCH_ADD_EXISTS.format(path=op.path))
            result[op.path] = op.text or ""
        elif op.kind == "delete":
            if current is None:
                raise PatchError(f"{op.path}: cannot delete the file, it does not exist")
            result[op.path] = None
        else:
            if current is None:
                raise PatchError(PATCH_UPDATE_MISSING.format(path=op.path))
            content = _apply_hunks(op.path, current, op.hunks)
            if op.move_to is not None and op.move_to != op.path:
                if read(op.move_to) is not None:
                    raise PatchError(PATCH_MOVE_EXISTS.format(path=op.path, move_to=op.move_to))
                result[op.path] = None
                result[op.move_to] = content
            else:
                result[op.path] = content
    return result
