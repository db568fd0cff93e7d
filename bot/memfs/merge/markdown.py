"""Markdown-aware three-way merge of memory files (pure; a pluggable `Resolver` may be asked
about what the rules cannot merge).

`ours` is the pull request's version, `theirs` the base branch's current one (already
published, so where both add, theirs comes first, as in `bot.memfs.merge.lines`).

- Frontmatter is merged key by key: a key changed on one side takes that side; changed the
  same way on both, that value; changed differently on both, a conflict on that key, except
  `description`, where the pull request's wins (it is a one-line summary the proposal wrote
  with its own body in mind; a note records the base's value). `read_only` is never changed
  by a merge: the result has the base's value (or none).
- The body is merged by `merge3` over "units": a list item (`- `, `* `, `+ `, `1. `, `1) `)
  together with its indented continuation lines is one unit, any other line is one unit
  (lines in code fences are never list items). Where both sides changed the same list
  items, the result is their union: the base's items each side kept (a deletion by either
  side is honoured), then theirs' additions, then ours' additions, duplicates removed. An
  item both sides added, in different places, appears once.
- Other overlaps go to a `Resolver`: by default `ConflictResolver`, which leaves them for a
  person; the integrator's `LLMResolver` (bot.integrator.resolve) asks a model for the whole
  merged file, whose answer is used only if it is still a valid memory document that agrees
  with every frontmatter key the rules merged.

The same merge serves both writers that meet a moved `main`: the integrator, when a pull
request's branch must take in what moved on its base, and sync, when an agent's queued
commits are replayed onto the remote's main.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import yaml

from bot.config import DEFAULT_POLICY, Policy
from bot.memfs.format.document import Document, DocumentError, parse
from bot.memfs.format.validate import validate_file
from bot.memfs.merge.lines import Conflict, join_lines, merge3, split_lines

# The markdown-aware merge (resolve.py), for sync and the integrator; shown after "path: ".
RESOLVE_ABSENT = "absent"
RESOLVE_KEY_CONFLICT = (
    "frontmatter '{key}' changed on both sides: {ours} in the pull request, {theirs} on the base (was {base})"
)
RESOLVE_DELETED_OURS = "deleted in the pull request, changed on the base"
RESOLVE_DELETED_THEIRS = "changed in the pull request, deleted on the base"
RESOLVE_NOTE_DESCRIPTION = "'description' changed on both sides: kept the pull request's {ours} (the base had {theirs})"
RESOLVE_NOTE_FAILED = "the {name} resolver could not help: {problem}"
RESOLVE_NOTE_REJECTED = "the {name} resolver's answer was not used: {problem}"
RESOLVE_ANSWER_TOO_LONG = "the answer has {size:,} characters, more than the {limit:,} a merge of these files can need"

READ_ONLY = "read_only"
DESCRIPTION = "description"
MAX_ROUNDS = 6
VALUE_CHARS = 60
_LIST_ITEM = re.compile(r"([ \t]*)([-*+]|[0-9]{1,9}[.)])[ \t]+(.*?)[ \t\r]*")
_FENCE = re.compile(r"^[ \t]*(```|~~~)")
_JOIN = "\ue000"  # joins a list item's lines into one merge3 line; never in memory text (checked)
_MARKERS = ("<<<<<<<", ">>>>>>>")
_MISSING: Any = object()


# ------------------------------------------------------------------------------------------ results
@dataclass(frozen=True)
class Resolution:
    """The merged text, or None with `conflicts` (one line each, for a person). `notes` say
    what the rules chose where a person might want to know; `resolved_by` names the resolver
    whose answer was used (None when the rules alone merged it)."""

    text: str | None
    conflicts: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    resolved_by: str | None = None

    @property
    def clean(self) -> bool:
        return self.text is not None


@dataclass(frozen=True)
class TreeResolution:
    """The merged tree (path -> text; a path absent was deleted). A conflicted path keeps the
    pull request's version in `files` and is listed in `conflicts`."""

    files: dict[str, str]
    conflicts: dict[str, tuple[str, ...]] = field(default_factory=dict)
    notes: dict[str, tuple[str, ...]] = field(default_factory=dict)
    resolved_by: dict[str, str] = field(default_factory=dict)

    @property
    def clean(self) -> bool:
        return not self.conflicts

    def writes(self, ours_files: Mapping[str, str]) -> dict[str, str | None]:
        """What to write over the pull request's tree to get this one (None: delete)."""
        out: dict[str, str | None] = {p: t for p, t in self.files.items() if ours_files.get(p) != t}
        out.update({p: None for p in ours_files if p not in self.files})
        return dict(sorted(out.items()))


# ---------------------------------------------------------------------------------------- resolvers
@dataclass(frozen=True)
class ResolveRequest:
    """What a resolver sees: the whole file three times, the repository's merge instructions,
    and what the rules could not merge."""

    path: str
    base: str
    ours: str
    theirs: str
    instructions: str
    conflicts: tuple[str, ...]


class ResolverError(Exception):
    """The resolver could not answer; str() says why in one line (no secrets)."""


class Resolver(Protocol):
    """Merges what the rules could not: the whole merged file, or None to leave it for a person."""

    name: str

    def resolve(self, request: ResolveRequest) -> str | None: ...


class ConflictResolver:
    """The default: overlapping edits are a person's call."""

    name = "conflict"

    def resolve(self, request: ResolveRequest) -> str | None:
        return None


# -------------------------------------------------------------------------------------- body units
def _units(lines: list[str], grouped: bool) -> tuple[list[str], set[str], set[str]]:
    """(units, list items, lines inside code fences): each list item with its continuation
    lines joined into one unit (when `grouped`); other lines as they are."""
    units: list[str] = []
    starts: list[int] = []
    code: set[str] = set()
    fenced = False
    in_item = False
    for line in lines:
        if _FENCE.match(line):
            fenced = not fenced
            units.append(line)
            in_item = False
        elif fenced:
            units.append(line)
            code.add(line)
        elif _LIST_ITEM.fullmatch(line):
            starts.append(len(units))
            units.append(line)
            in_item = True
        elif grouped and in_item and line.strip() and line[:1] in (" ", "\t"):
            units[-1] += _JOIN + line
        else:
            units.append(line)
            in_item = False
    return units, {units[i] for i in starts}, code


def _key(unit: str) -> tuple[str, ...]:
    """Two items are the same when their text is, whatever their marker or number."""
    first, *rest = unit.split(_JOIN)
    match = _LIST_ITEM.fullmatch(first)
    head = (match.group(1), match.group(3)) if match else ("", first)
    return (*head, *(line.rstrip() for line in rest))


def _union(base: Iterable[str], ours: Iterable[str], theirs: Iterable[str]) -> list[str]:
    """Items each side kept, in base order, then theirs' additions, then ours'; each once."""
    base, ours, theirs = list(base), list(ours), list(theirs)
    o_set, t_set, b_set = set(ours), set(theirs), set(base)
    ordered = [u for u in base if u in o_set and u in t_set]
    ordered += [u for u in theirs if u not in b_set]
    ordered += [u for u in ours if u not in b_set]
    seen: set[tuple[str, ...]] = set()
    out = []
    for unit in ordered:
        key = _key(unit)
        if key not in seen:
            seen.add(key)
            out.append(unit)
    return out


def _dedupe(result: list[str], items: set[str], *versions: list[str]) -> list[str]:
    """Drop later copies of a list item beyond the most any version had (both sides added it)."""
    allowed: Counter[tuple[str, ...]] = Counter()
    for version in versions:
        counts = Counter(_key(u) for u in version if u in items)
        for key, count in counts.items():
            allowed[key] = max(allowed[key], count)
    seen: Counter[tuple[str, ...]] = Counter()
    out = []
    for unit in result:
        if unit in items:
            key = _key(unit)
            seen[key] += 1
            if seen[key] > allowed[key]:
                continue
        out.append(unit)
    return out


def _where(conflict: Conflict, unit_lines: list[int], offset: int) -> str:
    """A conflict's place as line numbers of the file (units may span several lines)."""
    def line(index: int) -> int:
        return (unit_lines[index] if index < len(unit_lines) else (unit_lines[-1] + 1 if unit_lines else 0)) + 1

    start, end = conflict.base_start - 1, conflict.base_end - 1
    if end > start:
        first, last = line(start) + offset, line(end) + offset - 1
        return f"lines {first}-{last}" if last > first \
            else f"line {first}"
    return f"the place before line {line(start) + offset}"


def merge_text(base: str, ours: str, theirs: str, *, lists: bool = True,
               offset: int = 0) -> tuple[str | None, list[str]]:
    """Merge three texts by merge3, settling overlaps of list items by their union (when
    `lists`). Returns (text, []) or (None, conflict descriptions); `offset` is added to line
    numbers (the frontmatter's lines above a body)."""
    grouped = lists and not any(_JOIN in text for text in (base, ours, theirs))
    (b_lines, b_eol), (o_lines, o_eol), (t_lines, t_eol) = split_lines(base), split_lines(ours), split_lines(theirs)
    (b_units, b_items, b_code), (o_units, o_items, o_code), (t_units, t_items, t_code) = (
        _units(x, grouped) for x in (b_lines, o_lines, t_lines))
    items = (b_items | o_items | t_items) - (b_code | o_code | t_code)  # code that looks like a list is code

    def listy(conflict: Conflict) -> bool:
        return lists and all(u in items for u in (*conflict.base, *conflict.ours, *conflict.theirs))

    unit_lines = []
    count = 0
    for unit in b_units:
        unit_lines.append(count)
        count += (unit.count(_JOIN) if grouped else 0) + 1
    conflicts: list[Conflict] = []
    o_now, t_now = o_units, t_units
    for _ in range(MAX_ROUNDS):
        merged = merge3(join_lines(b_units, b_eol), join_lines(o_now, o_eol), join_lines(t_now, t_eol))
        if merged.text is not None:
            out_units, eol = split_lines(merged.text)
            if lists:
                out_units = _dedupe(out_units, items, b_units, o_units, t_units)
            if grouped:
                out_units = [line for unit in out_units for line in unit.split(_JOIN)]
            text = join_lines(out_units, eol)
            return text, []
        conflicts = merged.conflicts
        if not all(listy(c) for c in conflicts):
            break
        o_next, t_next = list(o_now), list(t_now)
        for c in reversed(conflicts):
            union = _union(c.base, c.ours, c.theirs)
            o_next[c.ours_start - 1: c.ours_end - 1] = union
            t_next[c.theirs_start - 1: c.theirs_end - 1] = union
        if (o_next, t_next) == (o_now, t_now):
            break
        o_now, t_now = o_next, t_next
    unsettled = [c for c in conflicts if not listy(c)]
    return None, [f"both sides changed {_where(c, unit_lines, offset)}"
                  for c in (unsettled or conflicts)]


# ------------------------------------------------------------------------------------- frontmatter
def _same(a: Any, b: Any) -> bool:
    """Equal and of the same type (YAML's `true` is not `1`), recursively for lists and maps."""
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _show(value: Any) -> str:
    if value is _MISSING:
        return RESOLVE_ABSENT
    text = " ".join(json.dumps(value, ensure_ascii=False, default=str).split())
    return text if len(text) <= VALUE_CHARS else text[: VALUE_CHARS - 1] + "…"


def merge_frontmatter(base: Mapping[str, Any], ours: Mapping[str, Any], theirs: Mapping[str, Any]
                      ) -> tuple[dict[str, Any], list[str], list[str], set[str]]:
    """(merged, conflict descriptions, notes, conflicted keys). Key order: the base's, then
    keys theirs added, then keys ours added."""
    keys = list(base) + [k for k in theirs if k not in base] + [k for k in ours if k not in base and k not in theirs]
    merged: dict[str, Any] = {}
    conflicts: list[str] = []
    notes: list[str] = []
    conflicted: set[str] = set()
    for key in keys:
        b, o, t = base.get(key, _MISSING), ours.get(key, _MISSING), theirs.get(key, _MISSING)
        if key == READ_ONLY:
            if not (_same(o, b) and _same(t, b)):
                notes.append(f"'read_only' kept as it was ({_show(b)}): a merge never changes it")
            value = b
        elif _same(o, t) or _same(t, b):
            value = o
        elif _same(o, b):
            value = t
        elif key == DESCRIPTION and isinstance(o, str) and o.strip() and isinstance(t, str) and t.strip():
            notes.append(RESOLVE_NOTE_DESCRIPTION.format(ours=_show(o), theirs=_show(t)))
            value = o
        else:
            conflicts.append(RESOLVE_KEY_CONFLICT.format(key=key, ours=_show(o), theirs=_show(t),
                                                               base=_show(b)))
            conflicted.add(key)
            continue
        if value is not _MISSING:
            merged[key] = value
    return merged, conflicts, notes, conflicted


# ------------------------------------------------------------------------------------------ files
@dataclass(frozen=True)
class _Parts:
    opening: str
    head: str
    closing: str
    body: str
    doc: Document


def _parts(text: str, *, empty_ok: bool = False) -> _Parts | None:
    """A memory document split at its delimiters (kept as written), or None if it is not one."""
    if empty_ok and text == "":
        return _Parts("---\n", "", "---\n", "", Document({}, ""))
    try:
        doc = parse(text)
    except DocumentError:
        return None
    lines = text.splitlines(keepends=True)
    for index in range(1, len(lines)):
        if lines[index].rstrip("\r\n").rstrip() == "---":
            return _Parts(lines[0], "".join(lines[1:index]), lines[index], "".join(lines[index + 1:]), doc)
    return None  # pragma: no cover - parse() succeeded, so the closing line exists


def _same_mapping(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)


def _render_head(merged: dict[str, Any], *candidates: _Parts) -> str:
    """The frontmatter text: a side's own text when the merge equals it (no reformatting)."""
    for part in candidates:
        if _same_mapping(merged, part.doc.frontmatter):
            return part.head
    if not merged:
        return ""
    return yaml.safe_dump(merged, sort_keys=False, allow_unicode=True, width=1 << 30, default_flow_style=False)


def _answer_problem(path: str, answer: Any, request: ResolveRequest, docs: tuple[_Parts, ...] | None,
                    merged: dict[str, Any], conflicted: set[str], policy: Policy) -> str | None:
    """Why a resolver's answer cannot be used, or None. It must be text of a sane size with no
    conflict markers, validate against the base branch's version, and, for documents, keep
    every frontmatter key the rules merged (read_only included) as they merged it."""
    if not isinstance(answer, str) or not answer.strip():
        return "the answer is empty"
    budget = 2 * (len(request.base) + len(request.ours) + len(request.theirs)) + 1000
    if len(answer) > budget:
        return RESOLVE_ANSWER_TOO_LONG.format(size=len(answer), limit=budget)
    if any(line.startswith(_MARKERS) for line in answer.split("\n")):
        return "the answer still has conflict markers"
    if docs is not None:
        part = _parts(answer)
        if part is None:
            return "the answer is not a memory document (frontmatter between --- lines, then the body)"
        got = part.doc.frontmatter
        for key in [*merged, *(k for k in got if k not in merged)]:
            if key in conflicted:
                continue
            if not _same(got.get(key, _MISSING), merged.get(key, _MISSING)):
                return f"the answer changes frontmatter '{key}', which the merge rules settle"
    problems = validate_file(path, answer.encode("utf-8"), request.theirs.encode("utf-8"), policy)
    if problems:
        return f"the answer does not validate: {problems[0].message}"
    return None


def resolve_markdown(path: str, base: str, ours: str, theirs: str, instructions: str = "", *,
                     resolver: Resolver | None = None, policy: Policy = DEFAULT_POLICY) -> Resolution:
    """Merge one file; `base` "" means both sides added it. See the module docstring."""
    if ours == theirs or theirs == base:
        return Resolution(ours)
    if ours == base:
        return Resolution(theirs)
    markdown = path.endswith(".md")
    parts = (_parts(base, empty_ok=True), _parts(ours), _parts(theirs)) if markdown else (None,)
    docs = parts if all(p is not None for p in parts) else None
    merged: dict[str, Any] = {}
    conflicted: set[str] = set()
    notes: list[str] = []
    if docs is not None:
        b, o, t = docs
        merged, conflicts, notes, conflicted = merge_frontmatter(b.doc.frontmatter, o.doc.frontmatter,
                                                                 t.doc.frontmatter)
        offset = o.opening.count("\n") + o.head.count("\n") + o.closing.count("\n")
        body, body_conflicts = merge_text(b.body, o.body, t.body, offset=offset)
        conflicts += body_conflicts
        text = None if conflicts or body is None else o.opening + _render_head(merged, o, t, b) + o.closing + body
    elif not base and not markdown:
        text, conflicts = None, ["added on both sides with different content"]
    else:
        text, conflicts = merge_text(base, ours, theirs, lists=markdown)
    if text is not None and not conflicts:
        return Resolution(text, (), tuple(notes))

    strategy = resolver or ConflictResolver()
    request = ResolveRequest(path, base, ours, theirs, instructions, tuple(conflicts))
    try:
        answer = strategy.resolve(request)
    except ResolverError as exc:
        return Resolution(None, tuple(conflicts), (*notes, RESOLVE_NOTE_FAILED.format(
            name=strategy.name, problem=exc)))
    except Exception as exc:  # a pluggable strategy must not take the integrator down
        return Resolution(None, tuple(conflicts), (*notes, RESOLVE_NOTE_FAILED.format(
            name=getattr(strategy, "name", "resolver"), problem=type(exc).__name__)))
    if answer is None:
        return Resolution(None, tuple(conflicts), tuple(notes))
    problem = _answer_problem(path, answer, request, docs, merged, conflicted, policy)
    if problem is not None:
        return Resolution(None, tuple(conflicts), (*notes, RESOLVE_NOTE_REJECTED.format(
            name=strategy.name, problem=problem)))
    return Resolution(answer, (), tuple(notes), strategy.name)


def resolve_tree(base_files: Mapping[str, str], ours_files: Mapping[str, str], theirs_files: Mapping[str, str],
                 instructions: str = "", *, resolver: Resolver | None = None,
                 policy: Policy = DEFAULT_POLICY) -> TreeResolution:
    """Merge whole trees (path -> text). A path added, deleted or changed on one side takes
    that side; deleted on one side and changed on the other is a conflict; changed (or added)
    on both goes through `resolve_markdown`."""
    files: dict[str, str] = {}
    conflicts: dict[str, tuple[str, ...]] = {}
    notes: dict[str, tuple[str, ...]] = {}
    resolved_by: dict[str, str] = {}
    for path in sorted(set(base_files) | set(ours_files) | set(theirs_files)):
        b, o, t = base_files.get(path), ours_files.get(path), theirs_files.get(path)
        if o == t or t == b:
            value = o
        elif o == b:
            value = t
        elif o is None or t is None:
            conflicts[path] = (RESOLVE_DELETED_OURS if o is None else RESOLVE_DELETED_THEIRS,)
            value = o
        else:
            result = resolve_markdown(path, b or "", o, t, instructions, resolver=resolver, policy=policy)
            if result.notes:
                notes[path] = result.notes
            if result.resolved_by:
                resolved_by[path] = result.resolved_by
            if result.text is None:
                conflicts[path] = result.conflicts
                value = o
            else:
                value = result.text
        if value is not None:
            files[path] = value
    return TreeResolution(files, conflicts, notes, resolved_by)
