"""Validation of memory changes: one pure function shared by the pre-commit hook, the memory
tool, `memrepo validate` and the integrator's status check.

Inputs are plain data (paths and bytes), so every rule is tested by table without git.
The frontmatter rules and their messages are Letta Code's (applied to the same paths, so a
repository valid for one tool is valid for the other); the size, depth and encoding rules
are memrepo's own, and so is holding `read_only` for every markdown file of memory, where
Letta Code's hook checks it only under system/ and reference/.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from bot import messages
from bot.config import CONFIG_PATH, Policy, PolicyError, parse_policy
from bot.memfs.document import DocumentError, parse, split, try_parse

ALLOWED_KEYS = ("description", "read_only", "limit")
_FRONTMATTER_PATH = re.compile(r"^(memory/)?(system|reference)/.*\.md$")
_FLAT_SKILL = re.compile(r"(^|/)skills/[^/]+\.md$")
_SYSTEM_PATH = re.compile(r"^(memory/)?system/")


@dataclass(frozen=True, order=True)
class Problem:
    path: str
    message: str

    def __str__(self) -> str:
        return f"  {self.path}: {self.message}"


def needs_frontmatter(path: str) -> bool:
    return bool(_FRONTMATTER_PATH.match(path))


def is_core(path: str) -> bool:
    """A file compiled into the system prompt."""
    return bool(_SYSTEM_PATH.match(path)) and path.endswith(".md")


def is_memory_document(path: str) -> bool:
    """A markdown file that belongs to memory (not git, CI or memrepo's own state)."""
    return path.endswith(".md") and not path.startswith((".memrepo/", ".github/", ".git/"))


def decode(data: bytes) -> tuple[str | None, str | None]:
    """(text, None) for UTF-8 text, or (None, problem message) for anything else."""
    if b"\0" in data:
        return None, messages.BINARY
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        return None, messages.NOT_UTF8.format(byte=data[exc.start], offset=exc.start)


def system_depth(path: str) -> int:
    """Folders between `system/` and the file: system/a.md is 0, system/x/a.md is 1."""
    parts = path.split("/")
    if parts[0] == "memory":
        parts = parts[1:]
    return max(len(parts) - 2, 0)


def _kind(value: object) -> str:
    return "nothing" if value is None else type(value).__name__


def _read_only(text: str | None) -> object:
    """The read_only value of a document at HEAD (None when absent or unparsable)."""
    if text is None:
        return None
    try:
        return parse(text).frontmatter.get("read_only")
    except DocumentError:
        return None


def is_read_only(data: bytes | None) -> bool:
    """Whether a file's content (None: absent) marks it `read_only: true`, which nobody may
    change, move or delete through memrepo: the tool, the hook and the pull-request check
    all ask here, for every markdown file of memory (Letta Code checks only system/ and
    reference/, the folders whose frontmatter it requires)."""
    if data is None:
        return False
    # Decoded leniently: a stray byte in the body does not unlock the file.
    return _read_only(data.decode("utf-8", "replace")) is True


def _read_only_problems(fm: Mapping[str, object], head_text: str | None) -> list[str]:
    """Letta's rules for the protected `read_only` field: an edit may not set, change or
    remove it, and it must be a boolean."""
    before = _read_only(head_text)
    if head_text is None:
        if "read_only" in fm:
            return [messages.READ_ONLY_SET]
    elif "read_only" in fm and fm["read_only"] != before:
        return [messages.READ_ONLY_CHANGED]
    elif "read_only" not in fm and before is not None:
        return [messages.READ_ONLY_REMOVED]
    elif "read_only" in fm and not isinstance(fm["read_only"], bool):
        return [messages.READ_ONLY_NOT_BOOL.format(kind=_kind(fm["read_only"]))]
    return []


def _frontmatter_problems(text: str, head_text: str | None) -> list[str]:
    try:
        split(text)
    except DocumentError as exc:
        return [str(exc)]
    try:
        doc = parse(text)
    except DocumentError as exc:
        return [str(exc)]
    found: list[str] = []
    fm = doc.frontmatter
    for key in fm:
        if key not in ALLOWED_KEYS:
            found.append(messages.UNKNOWN_KEY.format(key=key))
    found += _read_only_problems(fm, head_text)
    if "description" not in fm:
        found.append(messages.MISSING_DESCRIPTION)
    elif not isinstance(fm["description"], str):
        if fm["description"] is None:
            found.append(messages.EMPTY_DESCRIPTION)
        else:
            found.append(messages.DESCRIPTION_NOT_TEXT.format(kind=_kind(fm["description"])))
    elif not fm["description"].strip():
        found.append(messages.EMPTY_DESCRIPTION)
    if "limit" in fm:
        limit = fm["limit"]
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            found.append(messages.LIMIT_NOT_INT.format(value=limit))
    return found


def validate_file(
    path: str, staged: bytes | None, head: bytes | None, policy: Policy
) -> list[Problem]:
    """Problems with one file as staged, given its content at HEAD (None: absent).

    A deletion (staged is None) is checked only for `read_only`: a move is a deletion and a
    new file, so this keeps a read_only file where it is. Limits only refuse growth: an
    edit that shrinks a file already over its limit (say, after the limit was lowered)
    passes, so memory that is too large can always be repaired one step at a time.
    """
    if staged is None:
        if is_memory_document(path) and is_read_only(head):
            return [Problem(path, messages.READ_ONLY_DELETED)]
        return []
    if path == CONFIG_PATH:
        return _config_problems(staged)
    if _FLAT_SKILL.search(path):
        return [Problem(path, messages.FLAT_SKILL)]
    if not is_memory_document(path):
        return []
    text, encoding_problem = decode(staged)
    if text is None:
        return [Problem(path, encoding_problem or messages.BINARY)]
    head_text = None
    if head is not None:
        head_text, _ = decode(head)
    if staged != head and is_read_only(head):
        return [Problem(path, messages.READ_ONLY_FILE)]
    found: list[str] = []
    if needs_frontmatter(path):
        found += _frontmatter_problems(text, head_text)
    else:  # frontmatter is optional here, but a read_only field in one has the same rules
        doc = try_parse(text)
        if doc is not None:
            found += _read_only_problems(doc.frontmatter, head_text)
    limits = policy.limits
    if len(text) > limits.file_chars and (head_text is None or len(text) > len(head_text)):
        found.append(messages.FILE_TOO_LARGE.format(size=len(text), limit=limits.file_chars))
    if is_core(path) and system_depth(path) > limits.system_depth:
        found.append(messages.TOO_DEEP.format(depth=system_depth(path), limit=limits.system_depth))
    return [Problem(path, message) for message in found]


def _config_problems(staged: bytes) -> list[Problem]:
    text, problem = decode(staged)
    if text is None:
        return [Problem(CONFIG_PATH, problem or messages.BINARY)]
    try:
        parse_policy(text)
    except PolicyError as exc:
        return [Problem(CONFIG_PATH, str(exc))]
    return []


def core_size(files: Mapping[str, bytes]) -> int:
    """Characters of all core memory files among `files` (undecodable ones count as bytes)."""
    total = 0
    for path, data in files.items():
        if is_core(path):
            text, _ = decode(data)
            total += len(text) if text is not None else len(data)
    return total


def validate_core(before: int, after: int, policy: Policy) -> list[Problem]:
    """The limit on all of system/ together; like file limits, only growth is refused."""
    limit = policy.limits.core_chars
    if after > limit and after > before:
        return [Problem("system/", messages.CORE_TOO_LARGE.format(size=after, limit=limit))]
    return []


def validate_changes(
    changes: Mapping[str, tuple[bytes | None, bytes | None]],
    policy: Policy,
    core: tuple[int, int] | None = None,
) -> list[Problem]:
    """All problems of a change: `changes` maps path -> (staged, head); `core` is the size
    of system/ (before, after) when the caller knows it. Sorted by path."""
    found: list[Problem] = []
    for path in sorted(changes):
        staged, head = changes[path]
        found += validate_file(path, staged, head, policy)
    if core is not None:
        found += validate_core(core[0], core[1], policy)
    return sorted(found, key=lambda p: p.path)


def format_problems(problems: list[Problem]) -> str:
    """The report the hook, the CLI and the status check print."""
    return "\n".join([messages.VALIDATION_HEADER, *map(str, problems)])
