"""The memory tool: an agent's tool call becomes exactly one validated commit, or nothing.

A write reads forward: parse the call (once: `call` parses a raw call, `apply` takes a parsed
one), `plan` it at HEAD (check the agent's `expected_revision`, compute the new contents
(pure, `edits.py`), check path safety and `read_only`, validate: nothing is written, and no
lock is taken), then `commit` the plan: under the clone's lock, refuse a dirty tree, plan again
only if HEAD moved meanwhile, commit, and only then push. A caller that decides where a change
goes (the agent's write path: main or a pull request) plans, decides, and commits the same
plan. Every refusal happens before the first byte is written, so a refused call leaves the
working tree and HEAD as they were; a push that fails leaves the commit queued and says so,
and commits a push set aside are reported with the result for the caller to deal with.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bot import identity
from bot.errors import MemrepoError
from bot.memfs import texts as memfs_texts
from bot.memfs.format import archival, constraints, document, layout, paths, validate
from bot.memfs.format.layout import V1, V2
from bot.memfs.store import checks
from bot.memfs.store.repo import LINK_MODE, MemoryRepo, configured_agent_id, configured_agent_name
from bot.memfs.texts import CALL_UNKNOWN_COMMAND, READ_ONLY_FILE
from bot.memfs.tool import edits, patch
from bot.memfs.tool.calls import SEARCH_COMMANDS, Call, named_command, parse_call
from bot.texts import first_few
from bot.trailers import with_trailers

# Letta's memory tool, verbatim (without its `memory: ` prefix).
V2_NO_SYSTEM = "core memory uses root Markdown files, not system/"
V2_NO_SKILLS = "skills are managed by the skill/file tooling, not the memory tool"
V2_NEEDS_INDEX = "Memory requires {index} before writing {path}"
V2_INDEX_NOT_DELETED = "MEMORY.md indexes cannot be deleted"
SEARCH_NEEDS_SESSION = ("{command} is answered by an agent session (AgentSession, `memrepo tool` or `memrepo mcp`), "
                        "which also knows the transcripts; the memory tool alone only edits and views files")
# Paths given to the memory tool.
PATH_PROBLEM = "{path}: {problem}"
PATH_SYMLINK = "path '{path}' goes through a symbolic link that points outside the memory repository"
VIEW_LISTING_HEADER = "Memory files under {folder} at revision {revision}:"
NOT_FOUND = "{path} does not exist; `view` lists the memory files"
IS_FOLDER = "{path} is a folder, not a file"
CREATE_EXISTS = (
    "{path} already exists (its current content is attached); edit it with str_replace or insert, "
    "or pass expected_revision to replace it whole"
)
UNTRACKED_IN_WAY = (
    "{path} exists in the working tree but was never committed; commit or remove it before "
    "creating it through the memory tool"
)
NO_CHANGE = "no change: {paths} already reads as requested, so nothing was committed"
DIRTY = (
    "the memory repository has uncommitted changes ({paths}); commit or discard them "
    "(git -C {root} status) before editing through the memory tool"
)
UNKNOWN_REVISION = "expected_revision {revision} is not a commit of this memory repository"
REVISION_CONFLICT = (
    "{path} changed since revision {seen} (memory is now at {head}) and {state}; redo the "
    "edit against the current version and pass expected_revision {head}"
)
PATH_SYMLINK_INSIDE = (
    "path '{path}' goes through a symbolic link; the memory tool writes only regular files"
)
READ_ONLY_REFUSED = (
    "{path}: " + READ_ONLY_FILE + ". A person owns it: propose the change to them instead."
)
FIX_AND_RETRY = "Nothing was written. Fix the problems above and call the tool again."
COMMITTED = "Committed {sha} \"{message}\"; {note}"
PUSHED = "pushed to origin/main."
NO_REMOTE_NOTE = "saved in the local memory repository (no remote is connected)."
NOT_PUSHED = "saved locally but NOT pushed yet ({reason}); the next sync will push it."
DEFAULT_REASON = {
    "create": "Create {path}",
    "str_replace": "Edit {path}",
    "insert": "Add to {path}",
    "delete": "Delete {path}",
    "rename": "Rename {old} to {new}",
    "update_description": "Update the description of {path}",
    "apply_patch": "Patch {path}",
    "core_memory_append": "Append to {path}",
    "core_memory_replace": "Edit {path}",
    "archival_memory_insert": "Archive a passage in {path}",
}


@dataclass
class ToolResult:
    """What the agent (and the harness) learns from a call."""

    ok: bool
    command: str
    message: str
    commit: str | None = None
    revision: str | None = None
    pushed: bool | None = None
    paths: list[str] = field(default_factory=list)
    content: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Plan:
    """A call and, for a write, what it changes at `head`: path -> (before, after); after None
    deletes. Every check a write passes has passed."""

    call: Call
    head: str
    changes: dict[str, tuple[bytes | None, bytes | None]] = field(default_factory=dict)

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(sorted(self.changes))


@dataclass(frozen=True)
class Committed:
    """A committed plan's result, and the queued commits its push set aside (sync's entries):
    the caller says what becomes of them (`set_aside_note`, or pull requests)."""

    result: ToolResult
    set_aside: tuple[Any, ...] = ()


class MemoryTool:
    """Applies memory tool calls to one clone as one agent."""

    def __init__(
        self,
        repo: MemoryRepo | str | os.PathLike[str],
        agent_id: str | None = None,
        agent_name: str | None = None,
        *,
        push: bool = True,
    ) -> None:
        self.repo = repo if isinstance(repo, MemoryRepo) else MemoryRepo.open(repo)
        configured = configured_agent_id(self.repo)
        agent_id = agent_id or configured
        if not agent_id:
            raise MemrepoError(memfs_texts.NO_AGENT_ID)
        if agent_name is None and agent_id == configured:
            agent_name = configured_agent_name(self.repo)
        self.identity = identity.agent(agent_id, agent_name)
        self.agent_id, self.agent_name = agent_id, agent_name
        self.push = push
        self.now: Callable[[], datetime] = lambda: datetime.now(UTC)  # archival entries' time

    # ------------------------------------------------------------------ entry
    def call(self, raw: object) -> ToolResult:
        """Parse one call as an agent sent it (a mapping or its JSON text) and apply it: the
        entry for edges that hold the raw call. Never raises for bad input: a refusal is a
        result with ok False."""
        try:
            call = parse_call(raw)
        except MemrepoError as exc:
            return self.refused(named_command(raw), exc)
        return self.apply(call)

    def apply(self, call: Call, *, trailers: Sequence[tuple[str, str]] = ()) -> ToolResult:
        """Apply one parsed call; a write's commit carries `trailers` (the session's provenance:
        agent, conversation, the turn's messages), and its result tells of commits a push set
        aside. Never raises for bad input: a refusal is a result with ok False."""
        try:
            if call.command in SEARCH_COMMANDS:
                raise MemrepoError(SEARCH_NEEDS_SESSION.format(command=call.command))
            if not call.writes:
                return self._view(call)
            done = self.commit(self.plan(call), trailers)
        except MemrepoError as exc:
            return self.refused(call.command, exc)
        if done.set_aside:
            from bot.memfs import sync

            done.result.message = f"{done.result.message} {sync.set_aside_note(done.set_aside)}"
        return done.result

    def refused(self, command: str, exc: MemrepoError) -> ToolResult:
        """The result of a refusal: what went wrong, the revision it was judged at, and the
        current content when the agent needs it to redo the edit."""
        content = exc.details.get("content")
        return ToolResult(
            ok=False,
            command=command,
            message=exc.message,
            revision=self.repo.head_sha(),
            content=content if isinstance(content, str) else None,
        )

    # ------------------------------------------------------------------- view
    def _view(self, call: Call) -> ToolResult:
        head = self.repo.head_sha()
        path = call.args["path"]
        data = self.repo.read(path, head) if path else None
        if data is None and path and not path.endswith(".md"):
            alt = self.repo.read(path + ".md", head)
            if alt is not None:
                path, data = path + ".md", alt
        if data is not None:
            text = _decode(data, path)
            content = edits.numbered(text, call.args.get("view_range"))
            return ToolResult(True, "view", content, revision=head, paths=[path], content=content)
        if path and not self.repo.is_folder(path, head):
            raise MemrepoError(NOT_FOUND.format(path=path))
        listing = self._listing(path, head)
        return ToolResult(True, "view", listing, revision=head, paths=[path or "."], content=listing)

    def _listing(self, folder: str, head: str | None) -> str:
        prefix = folder.rstrip("/") + "/" if folder else ""
        lines = [VIEW_LISTING_HEADER.format(folder=folder or ".", revision=(head or "")[:12])]
        for path, data in sorted(self.repo.files(head or "HEAD", folder).items()):
            if path.startswith(".") or "/." in path or not path.startswith(prefix):
                continue
            doc = document.try_parse(data.decode("utf-8", "replace"))
            description = doc.description if doc else ""
            size = len(data.decode("utf-8", "replace"))
            lines.append(f"{path} ({size:,} chars)" + (f" — {description}" if description else ""))
        return "\n".join(lines)

    # ------------------------------------------------------------------ write
    def plan(self, call: Call) -> Plan:
        """What `call` changes at HEAD, after every check a write passes (a view changes
        nothing); MemrepoError, saying why, when it would be refused. Writes nothing and takes
        no lock, so a caller can decide where the change goes before committing it."""
        head = self.repo.head_sha()
        assert head is not None  # MemoryRepo.open refuses repositories without commits
        if not call.writes:
            return Plan(call, head)
        changes = self._plan(call, head)
        self._check_revision(call, head, changes)
        self._check_safety(changes, head)
        problems = self._validate(changes, head)
        if problems:
            raise MemrepoError(validate.format_problems(problems) + "\n" + FIX_AND_RETRY)
        return Plan(call, head, {path: (self.repo.read(path, head), after) for path, after in changes.items()})

    def commit(self, plan: Plan, trailers: Sequence[tuple[str, str]] = ()) -> Committed:
        """Commit a write's plan (planned again first if HEAD moved since), then push; the
        commits the push set aside come back with the result. MemrepoError when the tree is
        dirty or the plan no longer holds."""
        repo, call = self.repo, plan.call
        with repo.lock():
            dirty = repo.settle()
            if dirty:
                raise MemrepoError(DIRTY.format(paths=first_few(dirty), root=repo.root))
            if repo.head_sha() != plan.head:
                plan = self.plan(call)
            changes = {path: after for path, (_, after) in plan.changes.items()}
            message = call.reason or _default_reason(call, sorted(changes))
            if trailers:
                message = with_trailers(message, trailers)
            sha = repo.commit(changes, message, self.identity, parent=plan.head)
        pushed, note, set_aside = self._push(sha)
        summary = COMMITTED.format(sha=sha[:12], message=message.splitlines()[0], note=note)
        return Committed(ToolResult(True, call.command, summary.rstrip(), commit=sha, revision=repo.head_sha(),
                                    pushed=pushed, paths=sorted(changes)), set_aside)

    def _push(self, sha: str) -> tuple[bool | None, str, tuple[Any, ...]]:
        """(pushed, what to say of it, the commits the push set aside)."""
        if not self.push:
            return False, "saved locally; pushing is turned off for this session.", ()
        from bot.memfs import sync  # only a push needs the sync package

        result = sync.push(self.repo)
        if result.reason == sync.NO_REMOTE:
            return None, NO_REMOTE_NOTE, ()
        if any(e.commit == sha for e in result.set_aside):
            return False, "", result.set_aside
        note = PUSHED if result.pushed else NOT_PUSHED.format(reason=result.reason)
        return result.pushed, note, result.set_aside

    # ------------------------------------------------------------------- plan
    def _read_text(self, path: str, head: str) -> str:
        data = self.repo.read(path, head)
        if data is None:
            if self.repo.is_folder(path, head):
                raise MemrepoError(IS_FOLDER.format(path=path))
            raise MemrepoError(NOT_FOUND.format(path=path))
        return _decode(data, path)

    def _existing(self, path: str, head: str) -> str:
        """Letta lets agents omit `.md`; find what the path names at HEAD."""
        if self.repo.read(path, head) is not None or self.repo.is_folder(path, head):
            return path
        if not path.endswith(".md") and self.repo.read(path + ".md", head) is not None:
            return path + ".md"
        raise MemrepoError(NOT_FOUND.format(path=path))

    def _plan(self, call: Call, head: str) -> dict[str, bytes | None]:
        """New contents (None: deleted) of every path the call changes. A Letta-spelled call
        edits as Letta's tool does (edits.letta_*), in the memory's layout (v1 or v2)."""
        a = call.args
        c = call.command
        kind = checks.memory_layout(self.repo, head)
        path = a.get("path")
        if kind == V2 and c in ("core_memory_append", "core_memory_replace"):
            path = a["path"].removeprefix("system/")  # v2's core blocks are root files
        if kind == V2:
            for target in (path, a.get("old_path"), a.get("new_path")):
                _v2_allowed(target)
        new: dict[str, str | None]
        if c == "create":
            if self.repo.is_folder(path, head):
                raise MemrepoError(IS_FOLDER.format(path=path))
            current = self.repo.read(path, head)
            if current is not None and call.expected_revision is None:
                raise MemrepoError(CREATE_EXISTS.format(path=path),
                                   content=_decode(current, path))
            if current is None and (self.repo.root / path).exists():
                raise MemrepoError(UNTRACKED_IN_WAY.format(path=path))
            if kind == V2:
                self._v2_indexed(path, head)
            if a.get("description") is not None or (kind == V2 and layout.is_index(path)):
                new = {path: edits.letta_created(path, a.get("description"), a["file_text"], kind)}
            else:
                new = {path: a["file_text"]}  # a whole file, as Anthropic's tool passes it
        elif c == "str_replace" and call.letta:
            new = {path: edits.letta_replaced(self._read_text(path, head), a["old"], a["new"], path, kind)}
        elif c in ("str_replace", "core_memory_replace"):
            new = {path: edits.replaced(self._read_text(path, head), a["old"], a["new"], path)}
        elif c == "insert":
            text = self._read_text(path, head)
            if call.letta:
                new = {path: edits.letta_inserted(text, a["insert_line"], a["insert_text"], path, kind)}
            else:
                new = {path: edits.inserted(text, a["insert_line"], a["insert_text"], path)}
        elif c == "core_memory_append":
            new = {path: edits.appended(self._read_text(path, head), a["content"])}
        elif c == "update_description":
            text = self._read_text(path, head)
            new = {path: edits.letta_with_description(text, a["description"], path, kind)}
        elif c == "delete":
            path = self._existing(path, head)
            if kind == V2 and layout.is_index(path):
                raise MemrepoError(V2_INDEX_NOT_DELETED)
            new = {p: None for p in self._files_under(path, head)}
        elif c == "rename":
            new = self._rename(a["old_path"], a["new_path"], head, kind)
        elif c == "archival_memory_insert":
            new = dict(self._archival_insert(a["content"], a.get("tags") or (), head, kind))
        elif c == "apply_patch":
            ops = patch.parse_patch(a["patch"])
            for op in ops:
                op.path = paths.normalize(op.path)
                if op.move_to:
                    op.move_to = paths.normalize(op.move_to)
            new = patch.apply_patch(ops, lambda p: _maybe_text(self.repo.read(p, head), p))
            if kind == V2:  # a patch names its paths inside: the v2 rules the other commands meet
                made = [target for target, text in new.items() if text is not None]
                for target, text in new.items():
                    _v2_allowed(target)
                    if text is None and layout.is_index(target):
                        raise MemrepoError(V2_INDEX_NOT_DELETED)
                    if text is not None and self.repo.blob_id(target, head) is None:
                        self._v2_indexed(target, head, made)
        else:  # pragma: no cover - parse_call only lets known commands through
            raise MemrepoError(CALL_UNKNOWN_COMMAND.format(command=c, commands=""))
        changes = {p: (None if t is None else t.encode("utf-8")) for p, t in new.items()}
        if all(self.repo.read(p, head) == data for p, data in changes.items()):
            raise MemrepoError(NO_CHANGE.format(paths=", ".join(sorted(changes))))
        return changes

    def _archival_insert(self, content: str, tags: Sequence[str], head: str, kind: str) -> dict[str, str]:
        """MemGPT's archival_memory_insert: one dated entry by this agent in archival/ (archival.py)."""
        when = self.now()
        month = archival.month_file(when).removesuffix(".md")  # archival/YYYY-MM: its files share the prefix
        wanted = [path for path in self.repo.paths(head, archival.FOLDER)
                  if path.startswith(month) or path == archival.INDEX_PATH]  # what plan_insert reads, no more
        files = {path: _decode(self.repo.read(path, head) or b"", path) for path in wanted}
        letta = constraints.in_force(checks.letta_constraints(self.repo, head), kind)
        limit, _ = validate.file_limit(archival.month_file(when), self.repo.policy(head), kind, letta)
        author = f"{self.agent_name} ({self.agent_id})" if self.agent_name else self.agent_id
        try:
            return archival.plan_insert(files, content, when, author, kind, limit, tags)
        except ValueError as exc:
            raise MemrepoError(str(exc)) from None

    def _v2_indexed(self, path: str, head: str, made: Collection[str] = ()) -> None:
        """Letta's v2 rule for a new file: each folder above it has its MEMORY.md (at `head`,
        or among the files the same call `made`)."""
        index = layout.missing_index(path, self.repo.paths(head).keys() | {path, *made})
        if index is not None:
            raise MemrepoError(V2_NEEDS_INDEX.format(index=index, path=path))

    def _files_under(self, path: str, head: str) -> list[str]:
        if self.repo.read(path, head) is not None:
            return [path]
        return sorted(self.repo.files(head, path))

    def _rename(self, old: str, new: str, head: str, kind: str = V1) -> dict[str, str | None]:
        old = self._existing(old, head)
        is_file = self.repo.read(old, head) is not None
        if is_file and old.endswith(".md") and "." not in new.rsplit("/", 1)[-1]:
            new += ".md"
        if kind == V2 and (layout.is_index(old) or layout.is_index(new)):
            raise MemrepoError("MEMORY.md indexes cannot be renamed")
        if kind == V2 and is_file:
            self._v2_indexed(new, head)
        if new == old:
            raise MemrepoError(f"{old} would be renamed to itself; nothing to do")
        if paths.is_under(new, old):
            raise MemrepoError(f"cannot move {old} into itself ({new})")
        if self.repo.read(new, head) is not None or self.repo.is_folder(new, head):
            raise MemrepoError(f"{new} already exists; choose another name or delete it first")
        out: dict[str, str | None] = {}
        for path in self._files_under(old, head):
            target = new + path[len(old):]
            out[path] = None
            out[target] = _decode(self.repo.read(path, head) or b"", path)
        return out

    # ----------------------------------------------------------------- checks
    def _check_revision(self, call: Call, head: str, changes: dict[str, bytes | None]) -> None:
        """Optimistic concurrency: refuse when a file the call touches moved since the
        revision the agent saw, and hand back the current content to redo the edit."""
        if call.expected_revision is None:
            return
        seen = self.repo.resolve(call.expected_revision)
        if seen is None:
            raise MemrepoError(UNKNOWN_REVISION.format(revision=call.expected_revision))
        if seen == head:
            return
        for path in sorted(changes):
            if self.repo.blob_id(path, seen) != self.repo.blob_id(path, head):
                current = self.repo.read(path, head)
                raise MemrepoError(
                    REVISION_CONFLICT.format(
                        path=path, seen=seen[:12], head=head[:12],
                        state="its current content is attached" if current is not None
                        else "it no longer exists"),
                    content=None if current is None else _decode(current, path),
                )

    def _check_safety(self, changes: dict[str, bytes | None], head: str) -> None:
        root = self.repo.root
        tree = self.repo.paths(head) if any(self.repo.blob_id(p, head) is None for p in changes) else {}
        for path in sorted(changes):
            if self.repo.mode(path, head) == LINK_MODE:
                raise MemrepoError(PATH_SYMLINK.format(path=path))
            current = root
            for part in path.split("/"):
                current = current / part
                if current.is_symlink():
                    target = Path(os.path.realpath(current))
                    if target != root and root not in target.parents:
                        raise MemrepoError(PATH_SYMLINK.format(path=path))
                    raise MemrepoError(PATH_SYMLINK_INSIDE.format(path=path))
            # A new name that is a read_only file's on a case-insensitive clone is that file there.
            for twin in [path, *(paths.twins(path, tree) if path not in tree else ())]:
                if validate.is_memory_document(twin) and validate.is_read_only(self.repo.read(twin, head)):
                    raise MemrepoError(READ_ONLY_REFUSED.format(path=twin))

    def _validate(self, changes: dict[str, bytes | None], head: str) -> list[validate.Problem]:
        return checks.check(self.repo, {p: (data, self.repo.read(p, head)) for p, data in changes.items()}, head)


def _v2_allowed(path: str | None) -> None:
    """Letta's tool keeps away from system/ and skills/ in a v2 memory."""
    if path is None:
        return
    if path == "system" or path.startswith("system/"):
        raise MemrepoError(V2_NO_SYSTEM)
    if path == "skills" or path.startswith("skills/"):
        raise MemrepoError(V2_NO_SKILLS)


def _decode(data: bytes, path: str) -> str:
    text, problem = validate.decode(data)
    if text is None:
        raise MemrepoError(PATH_PROBLEM.format(path=path, problem=problem))
    return text


def _maybe_text(data: bytes | None, path: str) -> str | None:
    return None if data is None else _decode(data, path)


def _default_reason(call: Call, changed: list[str]) -> str:
    a = call.args
    target = a.get("path") or a.get("old_path") or ", ".join(changed)
    if call.command == "rename":
        return DEFAULT_REASON["rename"].format(old=a["old_path"], new=a["new_path"])
    if call.command == "apply_patch":
        target = ", ".join(changed[:4]) + (" ..." if len(changed) > 4 else "")
    if call.command == "archival_memory_insert":
        target = next(path for path in changed if archival.is_archival(path))
    return DEFAULT_REASON[call.command].format(path=target)

