"""Validation of memory changes: one pure function shared by the pre-commit hook, the memory
tool, `memrepo validate` and the integrator's status check.

Inputs are plain data (paths and bytes), so every rule is tested by table without git.
The frontmatter rules are Letta Code's, run as its hook runs them (line by line, the same
messages, on the same paths, in both layouts: `layout.py`), so a repository valid for one
tool is valid for the other; memrepo adds what a YAML reader needs on top. The limits are
Letta's (`constraints.py`) wherever Letta sets one for a file, memrepo's (`.memrepo/config.yml`)
elsewhere. Encoding rules are memrepo's own, and so is holding `read_only` for every markdown
file of memory, where Letta Code's hook checks it only under system/ and reference/.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field

from bot.config import CONFIG_PATH, Policy, PolicyError, parse_policy
from bot.memfs.format import constraints as letta_limits
from bot.memfs.format import layout as layouts
from bot.memfs.format import paths
from bot.memfs.format.constraints import Constraints
from bot.memfs.format.document import DocumentError, DuplicateKey, parse, read_only_values
from bot.memfs.format.layout import V1, V2
from bot.memfs.texts import MISSING_FRONTMATTER, READ_ONLY_FILE, UNCLOSED_FRONTMATTER

# ---------------------------------------------------------------- Letta's constraints
# Its validator (letta-memory-constraints.cjs), verbatim.
DEPTH_EXCEEDS = "depth {depth} exceeds maxDepth {limit}"
CHARS_EXCEED = "{count} characters exceeds {limit} from {source}"
# ---------------------------------------------------------------- MemFS v2
# Letta's hook, verbatim.
V2_HEADER = "Memory validation failed:"
V2_UNKNOWN_KEY = "unknown frontmatter key '{key}' (allowed: name description)"
PATH_LOOKS_LIKE = (
    "looks like {other}: its letters are Unicode confusables of that name's (UTS #39), so a reader "
    "takes one for the other; use the existing name or another one"
)
PATH_COLLIDES = (
    "differs from {other} only in letter case or Unicode normalisation: on a case-insensitive clone "
    "(macOS, Windows) the two are one file; use the existing name or another one"
)
VALIDATION_HEADER = "Frontmatter validation failed:"
UNKNOWN_KEY = "unknown frontmatter key '{key}' (allowed: description read_only limit)"
READ_ONLY_CHANGED = "'read_only' is a protected field and cannot be changed by the agent"
READ_ONLY_SET = "'read_only' is a protected field and cannot be set by the agent"
READ_ONLY_REMOVED = "'read_only' is a protected field and cannot be removed by the agent"
EMPTY_DESCRIPTION = "'description' must not be empty"
MISSING_DESCRIPTION = "missing required field 'description'"
FLAT_SKILL = "invalid skill path (skills must be folders). Use skills/<name>/SKILL.md"
# memrepo's own rules.
NOT_UTF8 = (
    "not valid UTF-8 (first bad byte 0x{byte:02x} at offset {offset}); "
    "memory files must be UTF-8 text"
)
BINARY = "contains a NUL byte; memory files must be text, not binary data"
READ_ONLY_NOT_BOOL = "'read_only' must be true or false, found {kind}"
READ_ONLY_DELETED = "file is read_only and cannot be deleted or moved"
FILE_TOO_LARGE = (
    "file has {size:,} characters, over the limit of {limit:,} "
    "(limits.file_chars in .memrepo/config.yml); split it or move detail to external memory"
)
CORE_TOO_LARGE = (
    "system/ holds {size:,} characters in all, over the limit of {limit:,} "
    "(limits.core_chars in .memrepo/config.yml); move detail out of system/ into external memory"
)
TOO_DEEP = (
    "{depth} folders deep under system/, over the limit of {limit} "
    "(limits.system_depth in .memrepo/config.yml); use a flatter path"
)

ALLOWED_KEYS = ("description", "read_only", "limit")
_FRONTMATTER_PATH = re.compile(r"^(memory/)?(system|reference)/.*\.md$")
_FLAT_SKILL = re.compile(r"(^|/)skills/[^/]+\.md$")
_SYSTEM_PATH = re.compile(r"^(memory/)?system/")


@dataclass(frozen=True, order=True)
class Problem:
    path: str
    message: str
    joiner: str = field(default=": ", compare=False)  # Letta writes one message as "path is ..."

    def __str__(self) -> str:
        return f"  {self.path}{self.joiner}{self.message}"


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
        return None, BINARY
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        return None, NOT_UTF8.format(byte=data[exc.start], offset=exc.start)


def system_depth(path: str) -> int:
    """Folders between `system/` and the file: system/a.md is 0, system/x/a.md is 1."""
    parts = path.split("/")
    if parts[0] == "memory":
        parts = parts[1:]
    return max(len(parts) - 2, 0)


def _kind(value: object) -> str:
    return "nothing" if value is None else type(value).__name__


def _read_only(text: str | None) -> object:
    """The read_only value of a document at HEAD (None when absent or unparsable; True when
    any of the values a repeated key gives is)."""
    values = read_only_values(text) if text is not None else []
    return True if any(value is True for value in values) else next(iter(values), None)


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
            return [READ_ONLY_SET]
    elif "read_only" in fm and fm["read_only"] != before:
        return [READ_ONLY_CHANGED]
    elif "read_only" not in fm and before is not None:
        return [READ_ONLY_REMOVED]
    elif "read_only" in fm and not isinstance(fm["read_only"], bool):
        return [READ_ONLY_NOT_BOOL.format(kind=_kind(fm["read_only"]))]
    return []


def _legacy_value(text: str | None, key: str) -> str:
    """A field's value as Letta's hook reads it: the text after `key:` on each such line of
    the frontmatter, spaces trimmed (no YAML), "" when absent."""
    if not text:
        return ""
    lines = text.split("\n")
    try:
        end = lines.index("---", 1)
    except ValueError:
        return ""
    return "\n".join(line[len(key) + 1:].strip(" ") for line in lines[1:end] if line.startswith(key + ":"))


def letta_frontmatter(text: str, head_text: str | None, layout: str = V1) -> list[str]:
    """Letta Code's frontmatter rules, line by line as its hook applies them (v1: description,
    read_only, limit; v2: exactly name and description, written JSON-quoted), in its words
    and order. `head_text` is the file at HEAD (v1's read_only rules compare with it)."""
    v2 = layout == V2
    lines = text.split("\n")
    if lines[0] != "---":
        return [MISSING_FRONTMATTER]
    try:
        closing = lines.index("---", 1)
    except ValueError:
        return [UNCLOSED_FRONTMATTER]
    if not v2 and head_text and text != head_text and _legacy_value(head_text, "read_only") == "true":
        return [READ_ONLY_FILE]  # (Letta's hook sees changed files only)
    found: list[str] = []
    seen: set[str] = set()
    allowed = ("name", "description") if v2 else ALLOWED_KEYS
    for line in lines[1:closing]:
        if not line or (not v2 and line[0] in " \t"):
            continue  # v1 descriptions may continue on indented lines
        colon = line.find(":")
        raw_key = line if colon < 0 else line[:colon]
        key = raw_key.strip(" ") if v2 else raw_key.replace(" ", "")
        value = (line if colon < 0 else line[colon + 1:]).strip(" ")
        if key not in allowed:
            found.append(V2_UNKNOWN_KEY.format(key=key) if v2 else UNKNOWN_KEY.format(key=key))
            continue
        if v2 and key in seen:
            found.append(f"duplicate frontmatter key '{key}'")
        seen.add(key)
        if key == "read_only":
            if not head_text:
                found.append(READ_ONLY_SET)
            elif value != _legacy_value(head_text, key):
                found.append(READ_ONLY_CHANGED)
        if (v2 or key == "description") and (not value or (v2 and value in ('""', "''"))):
            found.append(f"'{key}' must not be empty")
    for key in allowed[:2] if v2 else ("description",):
        if key not in seen:
            found.append(f"missing required field '{key}'")
    if not v2 and _legacy_value(head_text, "read_only") and not _legacy_value(text, "read_only"):
        found.append(READ_ONLY_REMOVED)
    return found


def _yaml_problems(text: str, head_text: str | None) -> list[str]:
    """What a YAML reader of the frontmatter needs beyond Letta's rules: a mapping, a text
    description, a boolean read_only, a whole-number limit (the same messages where the rule
    is Letta's too: the caller drops repeats)."""
    try:
        doc = parse(text)
    except DocumentError as exc:
        return [str(exc)]
    found: list[str] = []
    fm = doc.frontmatter
    for key in fm:
        if key not in ALLOWED_KEYS:
            found.append(UNKNOWN_KEY.format(key=key))
    found += _read_only_problems(fm, head_text)
    if "description" not in fm:
        found.append(MISSING_DESCRIPTION)
    elif not isinstance(fm["description"], str):
        if fm["description"] is None:
            found.append(EMPTY_DESCRIPTION)
        else:
            found.append("'description' must be text, found {kind}".format(kind=_kind(fm["description"])))
    elif not fm["description"].strip():
        found.append(EMPTY_DESCRIPTION)
    if "limit" in fm:
        limit = fm["limit"]
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            found.append(f"'limit' must be a positive whole number, found {limit!r}")
    return found


def _frontmatter_problems(text: str, head_text: str | None) -> list[str]:
    """v1: Letta's rules, then what YAML readers need, each message once."""
    found = letta_frontmatter(text, head_text)
    if found and found[0] in (MISSING_FRONTMATTER, UNCLOSED_FRONTMATTER):
        return found
    return found + [m for m in dict.fromkeys(_yaml_problems(text, head_text)) if m not in found]


def _v2_problems(path: str, text: str) -> list[str]:
    """v2: a MEMORY.md index has no frontmatter; every other memory file exactly name and
    description (Letta's rules); skills/ is not memory's."""
    if path.startswith(layouts.SKILLS):
        return []
    if path.rsplit("/", 1)[-1] == layouts.INDEX:
        return ["MEMORY.md must not have frontmatter"] if text.split("\n", 1)[0] == "---" else []
    return letta_frontmatter(text, None, V2)


def validate_file(
    path: str, staged: bytes | None, head: bytes | None, policy: Policy, *,
    layout: str = V1, letta: Constraints | None = None, whole: bool = False,
) -> list[Problem]:
    """Problems with one file as staged, given its content at HEAD (None: absent), in a
    memory of `layout` under memrepo's `policy` and Letta's constraints in force (`letta`,
    `constraints.in_force`; None: none).

    A deletion (staged is None) is checked only for `read_only`: a move is a deletion and a
    new file, so this keeps a read_only file where it is. Limits only refuse growth: an
    edit that shrinks a file already over its limit (say, after the limit was lowered)
    passes, so memory that is too large can always be repaired one step at a time; depth
    is checked where a file is new. With `whole` (every file of a tree, `memrepo validate`
    without --base), the file is judged as memory must be: over its limit or too deep is a
    problem whether or not this step made it so.
    """
    if staged is None:
        if is_memory_document(path) and is_read_only(head):
            return [Problem(path, READ_ONLY_DELETED)]
        return []
    if path == CONFIG_PATH:
        return _config_problems(staged)
    if path == letta_limits.CONFIG_FILE:
        return _constraints_problems(staged)
    if _FLAT_SKILL.search(path):
        return [Problem(path, FLAT_SKILL)]
    if not is_memory_document(path):
        return []
    text, encoding_problem = decode(staged)
    if text is None:
        return [Problem(path, encoding_problem or BINARY)]
    head_text = None
    if head is not None:
        head_text, _ = decode(head)
    if staged != head and is_read_only(head):
        return [Problem(path, READ_ONLY_FILE)]
    found: list[str] = []
    if layout == V2:
        found += _v2_problems(path, text)
    elif needs_frontmatter(path):
        found += _frontmatter_problems(text, head_text)
    else:  # frontmatter is optional here, but a read_only field in one has the same rules
        try:
            found += _read_only_problems(parse(text).frontmatter, head_text)
        except DuplicateKey as exc:  # one reader would see one value, another the other
            found.append(str(exc))
        except DocumentError:
            pass  # not frontmatter, then: text
    found += _limit_problems(path, text, None if whole else head_text, policy, layout, letta)
    return [Problem(path, message) for message in found]


def file_limit(path: str, policy: Policy, layout: str, letta: Constraints | None) -> tuple[int | None, str | None]:
    """The most characters `path` may hold (None: no limit) and, where Letta's constraints set
    it, where the limit comes from (None: memrepo's policy)."""
    limit = letta.file_limit(path) if letta is not None and letta_limits.covers(path, layout) else None
    if limit is not None:
        return limit
    return policy.limits.file_chars, None


def _limit_problems(path: str, text: str, head_text: str | None, policy: Policy, layout: str,
                    letta: Constraints | None) -> list[str]:
    """Size and depth: Letta's limit where Letta sets one for the file (`constraints.py`, in
    its words), memrepo's otherwise."""
    found: list[str] = []
    grew = head_text is None or len(text) > len(head_text)
    covered = letta is not None and letta_limits.covers(path, layout)
    chars, source = file_limit(path, policy, layout, letta)
    if chars is not None and len(text) > chars and grew:
        found.append(FILE_TOO_LARGE.format(size=len(text), limit=chars) if source is None
                     else CHARS_EXCEED.format(count=len(text), limit=chars, source=source))
    if covered and letta is not None and letta.max_depth is not None:
        depth = letta_limits.depth(path)
        if depth > letta.max_depth and head_text is None:
            found.append(DEPTH_EXCEEDS.format(depth=depth, limit=letta.max_depth))
    elif layout == V1 and is_core(path) and system_depth(path) > policy.limits.system_depth:
        found.append(TOO_DEEP.format(depth=system_depth(path), limit=policy.limits.system_depth))
    return found


def index_problems(changes: Mapping[str, tuple[bytes | None, bytes | None]], tree: Collection[str],
                   had_root_index: bool) -> list[Problem]:
    """v2's indexes: every memory file written, and every one left under an index this
    change deletes, needs a MEMORY.md in each folder above it (`tree`: the paths after the
    change); a memory that had a root index keeps one."""
    found: list[Problem] = []
    removed = [p for p, (staged, _) in changes.items() if staged is None and layouts.is_index(p)]
    check = {p for p, (staged, _) in changes.items() if staged is not None}
    for index in removed:
        folder = index[: -len(layouts.INDEX)]
        check.update(p for p in tree if folder and p.startswith(folder))
    for path in sorted(check):
        if layouts.is_memory_file(path, V2) and path in tree:
            missing = layouts.missing_index(path, tree)
            if missing is not None:
                found.append(Problem(path, f"missing required index {missing}"))
    if had_root_index and layouts.INDEX not in tree:
        found.append(Problem(layouts.INDEX, "root memory index is required for MemFS v2"))
    return found


def _config_problems(staged: bytes) -> list[Problem]:
    text, problem = decode(staged)
    if text is None:
        return [Problem(CONFIG_PATH, problem or BINARY)]
    try:
        parse_policy(text)
    except PolicyError as exc:
        return [Problem(CONFIG_PATH, str(exc))]
    return []


def _constraints_problems(staged: bytes) -> list[Problem]:
    text, problem = decode(staged)
    if text is None:
        return [Problem(letta_limits.CONFIG_FILE, problem or BINARY)]
    try:
        letta_limits.parse(text)
    except letta_limits.ConstraintsError as exc:
        return [Problem(letta_limits.CONFIG_FILE, message) for message in exc.problems]
    return []


def config_change_problem() -> Problem:
    """Letta's hook refuses a commit that changes `.memfs.config.json` unless a person says
    so (LETTA_MEMORY_CONSTRAINTS_UPDATE=1); memrepo's hook does the same, and an agent's edit
    of it is a protected change, a pull request a person approves."""
    return Problem(letta_limits.CONFIG_FILE, "is protected and requires human approval to change", " ")


def core_size(files: Mapping[str, bytes]) -> int:
    """Characters of all core memory files among `files` (undecodable ones count as bytes)."""
    total = 0
    for path, data in files.items():
        if is_core(path):
            text, _ = decode(data)
            total += len(text) if text is not None else len(data)
    return total


def validate_core(before: int, after: int, policy: Policy, layout: str = V1,
                  letta: Constraints | None = None) -> list[Problem]:
    """The limit on all core memory together; like file limits, only growth is refused. A v2
    memory's is Letta's maxCoreMemoryCharacters (root Markdown), a v1 memory's memrepo's
    core_chars (system/): Letta counts core memory in v2 only."""
    if layout == V2 and letta is not None and letta.max_core_chars is not None:
        limit = letta.max_core_chars
        if after > limit and after > before:
            return [Problem("core memory", CHARS_EXCEED.format(
                count=after, limit=limit, source="maxCoreMemoryCharacters"))]
        return []
    limit = policy.limits.core_chars
    if layout == V1 and after > limit and after > before:
        return [Problem("system/", CORE_TOO_LARGE.format(size=after, limit=limit))]
    return []


def validate_changes(
    changes: Mapping[str, tuple[bytes | None, bytes | None]],
    policy: Policy,
    core: tuple[int, int] | None = None,
    *,
    layout: str = V1,
    letta: Constraints | None = None,
    tree: Collection[str] | None = None,
    had_root_index: bool = False,
    modes: Mapping[str, int] | None = None,
    whole: bool = False,
) -> list[Problem]:
    """All problems of a change: `changes` maps path -> (staged, head); `core` is the size
    of core memory (before, after) when the caller knows it; `tree` (the paths after the
    change) lets new names be checked against the others (`paths.collisions`) and, in v2,
    the indexes; `modes` holds the git mode of each path written as other than a regular
    file (100644). Every path written (added or changed, not deleted) must be one memory may
    hold (`paths.path_problem`, `paths.mode_problem`): its content is not judged otherwise.
    With `whole`, `changes` is every file of a tree and the limits hold for each file as it
    is (`validate_file`). Sorted by path."""
    found: list[Problem] = []
    modes = modes or {}
    for path in sorted(changes):
        staged, head = changes[path]
        problem = written_path_problem(path, modes.get(path)) if staged is not None and (
            staged != head or path in modes) else None
        if problem is not None:
            found.append(Problem(paths.shown(path), problem, " "))
            continue
        found += validate_file(path, staged, head, policy, layout=layout, letta=letta, whole=whole)
    if tree is not None:
        found += collision_problems(changes, tree, policy.protected)
    if core is not None:
        found += validate_core(core[0], core[1], policy, layout, letta)
    if layout == V2 and tree is not None:
        found += index_problems(changes, tree, had_root_index)
    return sorted(found, key=lambda p: p.path)


def written_path_problem(path: str, mode: int | None = None) -> str | None:
    """Why memory may not hold what a change writes at `path` (a regular file unless `mode`
    says otherwise), or None: the same rules as the memory tool's, with memrepo's own files
    at the top allowed (people and memrepo change them in reviewed commits)."""
    return paths.path_problem(path, memrepo_files=True) or (None if mode is None else paths.mode_problem(mode))


def collision_problems(changes: Mapping[str, tuple[bytes | None, bytes | None]],
                       tree: Collection[str], protected: Iterable[str] = ()) -> list[Problem]:
    """New paths that are one file with another path of `tree` (the paths after the change) on
    a case-insensitive clone: there, one of the two files would be lost; and new paths that
    look like another (`paths.lookalikes`: the same UTS #39 skeleton), or like a path the
    policy protects by name, there or not."""
    new = [path for path, (staged, head) in changes.items() if staged is not None and head is None]
    named = [glob.rstrip("/") for glob in protected if glob.rstrip("/") and not set(glob) & set("*?[")]
    found = [Problem(paths.shown(path), PATH_COLLIDES.format(other=paths.shown(other)), " ")
             for path, other in paths.collisions(new, tree).items()]
    return found + [Problem(paths.shown(path), PATH_LOOKS_LIKE.format(other=paths.shown(other)), " ")
                    for path, other in paths.lookalikes(new, tree, named).items()]


def format_problems(problems: list[Problem], layout: str = V1) -> str:
    """The report the hook, the CLI and the status check print (under Letta's header for
    the layout)."""
    header = V2_HEADER if layout == V2 else VALIDATION_HEADER
    return "\n".join([header, *map(str, problems)])
