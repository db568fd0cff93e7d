"""Compile committed memory into the `<memory>` block of the agent's system prompt.

Pure functions over plain data (path -> bytes, or path -> already-read documents), so the
format is table-tested without git; reading HEAD and caching live in `prompt.py`.

Compiling is split in two steps so the cache can skip the expensive one: `read_document`
turns one file's bytes into what the prompt needs of it (it depends on the bytes only, so
its result can be kept per blob id), and `render_memory` lays out the whole block.

A v2 memory (root MEMORY.md, `layout.py`) compiles its root files as core memory and then,
instead of the external tree, its MEMORY.md indexes (the root's first, then each indexed
folder's, shallow before deep) within the tree limits: the prompt shows an index and the
agent opens what it needs. Files in folders without an index are not memory there.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator, Mapping, Sequence
from typing import NamedTuple

from bot.config import Limits
from bot.memfs.format import layout as layouts
from bot.memfs.format.document import DocumentError, split, try_parse
from bot.memfs.format.layout import V1, V2
from bot.memfs.format.validate import decode, is_core

# memrepo's own, for v2.
INDEXES_TRUNCATED = "[Indexes truncated: showing {shown} of {total} MEMORY.md indexes. {omitted} omitted.]"
# Prompt compile.
COMPILE_UNREADABLE = "[this file cannot be shown in the prompt: {problem}]"
TREE_TRUNCATED = "[Tree truncated: showing {shown} of {total} entries. {omitted} omitted.]"
SHARED_INTRO = ("Shared memory: memory kept by the team, attached to several agents, not part of your "
                "in-context memory. Each one below has its own projection root and remote; its tree shows "
                "descriptions, not contents. Read its files as shared/<name>/<path> with the memory tool; a "
                "change you make there becomes a pull request on the shared repository, which the team reviews.")

DEFAULT_MEMORY_DIR = "$MEMORY_DIR"
DESCRIPTION_MAX = 200
SKILL_FILE = "SKILL.md"

CORE, SKILL, EXTERNAL, INDEX = "core", "skill", "external", "index"


class Entry(NamedTuple):
    """What the prompt shows of one file: its description (one line), its raw body, or why
    it cannot be shown at all (not UTF-8 text). A tuple: made hundreds of times a compile."""

    description: str = ""
    body: str = ""
    problem: str | None = None


NO_CONTENT = Entry()


def kind(path: str, layout: str = V1, paths: Collection[str] = ()) -> str | None:
    """Where a file goes in the prompt: core, skill, external tree, a v2 index, or nowhere
    (None). In v2, `paths` (the commit's) tells which folders are indexed."""
    if path.startswith("skills/"):
        parts = path.split("/")
        return SKILL if len(parts) == 3 and parts[2] == SKILL_FILE else None
    if path.startswith(".") or "/." in path:
        return None
    if layout == V2:
        if not path.endswith(".md") or layouts.missing_index(path, paths) is not None:
            return None
        if layouts.is_index(path):
            return INDEX
        return CORE if "/" not in path else None
    if is_core(path):
        return CORE
    return EXTERNAL


def needs_content(path: str, layout: str = V1, paths: Collection[str] = ()) -> bool:
    """Whether compiling reads this file's bytes; other files appear by name or not at all."""
    where = kind(path, layout, paths)
    return where in (CORE, SKILL, INDEX) or (where == EXTERNAL and path.endswith(".md"))


# ------------------------------------------------------------------ one document
_SIMPLE_LINE = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*): +([A-Za-z].*)")
# Plain words YAML 1.1 resolves to booleans or null (checked case-insensitively, plus y/n).
_NOT_TEXT = frozenset({"yes", "no", "true", "false", "on", "off", "null", "y", "n"})


def _simple_frontmatter(head: str) -> dict[str, str] | None:
    """The frontmatter when every line is `key: plain words`, else None (ask YAML).

    A fast path, not a second parser: memory files almost always look like this, and YAML
    costs 25-200 µs a file (libyaml or not), ten times this, which makes a cold compile of
    a few hundred files miss its budget. Anything the line pattern does not prove to be a
    plain string scalar (quotes at the start, `: ` or `#` inside, non-printable characters,
    booleans, numbers, continuation lines, a key written twice) goes to document.parse; a
    property test checks that whatever this accepts, document.parse reads the same way.
    """
    if "\r" in head:
        return None
    lines = head.split("\n")
    if lines[-1] == "":
        lines.pop()
    data: dict[str, str] = {}
    for line in lines:
        match = _SIMPLE_LINE.fullmatch(line)
        if match is None:
            return None
        key, value = match.group(1), match.group(2).rstrip(" ")
        if (key in data or key.lower() in _NOT_TEXT or value.lower() in _NOT_TEXT or not value.isprintable()
                or ": " in value or value.endswith(":") or "#" in value):
            return None
        data[key] = value
    return data


def _split(text: str) -> tuple[str, str] | None:
    """document.split, with a fast path for the usual shape: `---` lines ending in a plain
    newline and no other `---` in the frontmatter, where the first `\n---\n` is
    necessarily the line that closes it (split's line-by-line scan is 5 µs a file)."""
    if text.startswith("---\n"):
        end = text.find("\n---\n", 3)
        if end != -1 and "---" not in text[4:end]:
            return text[4 : end + 1], text[end + 5 :]
    try:
        return split(text)
    except DocumentError:
        return None


def one_line(text: str) -> str:
    """Whitespace (newlines included) collapsed, so a description fits on its line."""
    return " ".join(text.split())


def cut(text: str, limit: int = DESCRIPTION_MAX) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def read_document(data: bytes) -> Entry:
    """What the prompt needs of one file's bytes. A file whose frontmatter does not parse
    keeps its whole text as the body, so a broken file never hides memory."""
    text, problem = decode(data)
    if text is None:
        return Entry(problem=problem)
    parts = _split(text)
    if parts is None:
        return Entry(body=text)
    head, body = parts
    simple = _simple_frontmatter(head)
    if simple is not None:
        return Entry(one_line(simple.get("description", "")), body)
    doc = try_parse(text)
    if doc is None:
        return Entry(body=text)
    return Entry(one_line(doc.description), doc.body)


# ------------------------------------------------------------------ the whole block
_NOT_TAG = re.compile(r"[^\w.-]")


def trim_blank_lines(text: str) -> str:
    """The text without blank lines at either end (indentation of the first line kept;
    trailing whitespace of the last line goes too, which no reader can see)."""
    end = len(text.rstrip())
    if not end:
        return ""
    first = len(text) - len(text.lstrip())
    return text[text.rfind("\n", 0, first) + 1 : end]


def _tag(name: str) -> str:
    return _NOT_TAG.sub("_", name) or "_"


def compile_memory(files: Mapping[str, bytes], limits: Limits,
                   memory_dir: str = DEFAULT_MEMORY_DIR) -> str:
    """The `<memory>` block for the files of one commit (path -> bytes), in its layout."""
    layout = layouts.of(files)
    entries = {path: read_document(data) if needs_content(path, layout, files) else NO_CONTENT
               for path, data in files.items()}
    return render_memory(entries, limits, memory_dir, layout)


def compile_prompt(system_prompt: str, memory: str) -> str:
    """The system prompt, a blank line, then the memory block."""
    head = system_prompt.rstrip()
    return f"{head}\n\n{memory}" if head else memory


class SharedView(NamedTuple):
    """One attached shared memory as the prompt shows it: its name (the tool's `shared/<name>/`),
    its projection root as the prompt names it, its origin, and its files (path -> Entry; None
    when it is not checked out here)."""

    name: str
    projection: str
    url: str
    read_only: bool
    entries: Mapping[str, Entry] | None


def shared_listed(path: str) -> bool:
    """Whether a shared memory's file is listed in its tree (memrepo's and git's own files are not)."""
    return not (path.startswith(".") or "/." in path)


def render_shared(views: Sequence[SharedView], limits: Limits) -> list[str]:
    """The `<shared_memory>` block: a sentence saying what shared memory is, then each
    attachment's tree with descriptions (never contents), within the tree limits each."""
    if not views:
        return []
    out = ["<shared_memory>", SHARED_INTRO]
    for view in views:
        mode = ' read_only="true"' if view.read_only else ""
        out.append(f'<shared name="{_tag(view.name)}" address="shared/{_tag(view.name)}/"{mode}>')
        out.append(f"<projection>{view.projection}</projection>")
        out.append(f"<origin>{view.url}</origin>")
        if view.read_only:
            out.append("read-only: propose changes to it on its repository, not with the memory tool")
        if view.entries is None:
            out.append("[not projected here yet: memrepo shared sync]")
        else:
            listed = [path for path in view.entries if shared_listed(path)]
            out += render_tree(listed, view.entries, limits, view.projection)
        out.append("</shared>")
    out.append("</shared_memory>")
    return out


def render_memory(entries: Mapping[str, Entry], limits: Limits,
                  memory_dir: str = DEFAULT_MEMORY_DIR, layout: str | None = None,
                  shared: Sequence[SharedView] = ()) -> str:
    """The `<memory>` block from files already read (path -> Entry; files that need no
    content may map to NO_CONTENT), in `layout` (None: as the paths say), with the shared
    memories attached to it last."""
    base = memory_dir.rstrip("/")
    layout = layout or layouts.of(entries)
    paths = entries.keys()
    core: _CoreFolder = ({}, {})
    skills: list[str] = []
    external: list[str] = []
    indexes: list[str] = []
    for path in entries:
        where = kind(path, layout, paths)
        if where == CORE:
            _add_core(core, path)
        elif where == SKILL:
            skills.append(path)
        elif where == EXTERNAL:
            external.append(path)
        elif where == INDEX:
            indexes.append(path)
    out = ["<memory>"]
    _render_core(core, entries, base, out)
    if indexes:
        out += render_indexes(indexes, entries, limits, base)
    if skills:
        out.append("<skills>")
        for path in sorted(skills):
            description = cut(entries[path].description)
            out.append(f"- {path} — {description}" if description else f"- {path}")
        out.append("</skills>")
    if external:
        out.append("<external_projection>")
        out += render_tree(external, entries, limits, base)
        out.append("</external_projection>")
    out += render_shared(shared, limits)
    out.append("</memory>")
    return "\n".join(out)


# A folder of core memory: (files by stem -> path, subfolders by name).
_CoreFolder = tuple[dict[str, str], dict[str, "_CoreFolder"]]


def _add_core(root: _CoreFolder, path: str) -> None:
    parts = path.split("/")
    if "system" in parts[:-1]:
        parts = parts[parts.index("system") + 1 :]
    folder = root
    for name in parts[:-1]:
        folder = folder[1].setdefault(name, ({}, {}))
    folder[0][parts[-1][: -len(".md")]] = path


def _render_core(folder: _CoreFolder, entries: Mapping[str, Entry], base: str, out: list[str]) -> None:
    files, folders = folder
    # Keys sorted; a file sorts before a folder of the same name.
    for name, is_folder in sorted([(n, False) for n in files] + [(n, True) for n in folders]):
        tag = _tag(name)
        out.append(f"<{tag}>")
        if is_folder:
            _render_core(folders[name], entries, base, out)
        else:
            path = files[name]
            entry = entries[path]
            out.append(f"<projection>{base}/{path}</projection>")
            out.append(f"<description>{entry.description}</description>")
            if entry.problem is not None:
                out.append(COMPILE_UNREADABLE.format(problem=entry.problem))
            else:
                body = trim_blank_lines(entry.body)
                if body:
                    out.append(body)
        out.append(f"</{tag}>")


# ------------------------------------------------------------------ v2 indexes
def render_indexes(paths: list[str], entries: Mapping[str, Entry], limits: Limits, base: str) -> list[str]:
    """The `<memory_indexes>` block: each MEMORY.md with its text, the root's first, then
    shallow before deep, as many as fit in the tree limits (tree_lines, tree_chars), then a
    line saying how many were left out."""
    ordered = sorted(paths, key=lambda p: (p.count("/"), p))
    lines = ["<memory_indexes>"]
    chars = len(lines[0])
    shown = 0
    for path in ordered:
        entry = entries[path]
        body = (COMPILE_UNREADABLE.format(problem=entry.problem) if entry.problem is not None
                else trim_blank_lines(entry.body))
        block = ["<index>", f"<projection>{base}/{path}</projection>", *([body] if body else []), "</index>"]
        size = sum(len(line) + 1 for line in block)
        if len(lines) + len(block) + 2 > limits.tree_lines or chars + size > limits.tree_chars:
            break
        lines += block
        chars += size
        shown += 1
    if shown < len(ordered):
        lines.append(INDEXES_TRUNCATED.format(shown=shown, total=len(ordered), omitted=len(ordered) - shown))
    lines.append("</memory_indexes>")
    return lines


# ------------------------------------------------------------------ external tree
class _Folder:
    __slots__ = ("files", "folders")

    def __init__(self) -> None:
        self.folders: dict[str, _Folder] = {}
        self.files: list[str] = []


def _entry_lines(root: _Folder, entries: Mapping[str, Entry], limits: Limits) -> Iterator[str]:
    """Tree lines in display order, at most tree_children entries per folder. Lazy and
    iterative (a stack of folders being listed), so a huge or deep tree costs only the
    lines that fit."""

    def listing(folder: _Folder, prefix: str, path_prefix: str) -> Iterator[tuple]:
        items = [(name, folder.folders[name]) for name in sorted(folder.folders)]
        items += [(name, None) for name in sorted(folder.files)]
        items = items[: limits.tree_children]
        for index, (name, sub) in enumerate(items):
            yield name, sub, index == len(items) - 1, prefix, path_prefix

    stack = [listing(root, "", "")]
    while stack:
        item = next(stack[-1], None)
        if item is None:
            stack.pop()
            continue
        name, sub, last, prefix, path_prefix = item
        connector = "└── " if last else "├── "
        if sub is None:
            description = entries.get(path_prefix + name, NO_CONTENT).description
            suffix = f" — {cut(description)}" if description else ""
            yield f"{prefix}{connector}{name}{suffix}"
        else:
            yield f"{prefix}{connector}{name}/"
            stack.append(listing(sub, prefix + ("    " if last else "│   "), f"{path_prefix}{name}/"))


def render_tree(paths: list[str], entries: Mapping[str, Entry], limits: Limits, base: str) -> list[str]:
    """Lines of the external tree, within the tree limits (root and truncation lines
    included in the count), ending with the truncation line when anything is left out."""
    root = _Folder()
    total = len(paths)  # entries: every file and every folder
    for path in paths:
        *folders, name = path.split("/")
        folder = root
        for part in folders:
            sub = folder.folders.get(part)
            if sub is None:
                sub = folder.folders[part] = _Folder()
                total += 1
            folder = sub
        folder.files.append(name)

    head = f"{base}/"
    lines = [head]
    chars = len(head)
    for line in _entry_lines(root, entries, limits):
        if len(lines) + 1 > limits.tree_lines or chars + 1 + len(line) > limits.tree_chars:
            break
        lines.append(line)
        chars += 1 + len(line)
    shown = len(lines) - 1
    if shown == total:
        return lines

    def notice(count: int) -> str:
        return TREE_TRUNCATED.format(shown=count, total=total, omitted=total - count)

    while shown > 0 and (len(lines) + 1 > limits.tree_lines
                         or chars + 1 + len(notice(shown)) > limits.tree_chars):
        chars -= 1 + len(lines.pop())
        shown -= 1
    lines.append(notice(shown))
    return lines
