"""Gather what `memrepo validate` checks from the repository (the staged index, the working
tree, or a range of commits) and hand it to the pure validator, with what the rules depend
on: the layout (v1 or v2, `layout.py`), memrepo's policy and Letta's constraints in force."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable

import pygit2

from bot import messages
from bot.config import CONFIG_PATH, PolicyError, parse_policy
from bot.errors import MemrepoError
from bot.memfs import constraints, layout, validate
from bot.memfs.constraints import Constraints
from bot.memfs.layout import V2
from bot.memfs.repo import MemoryRepo

Changes = dict[str, tuple[bytes | None, bytes | None]]


class Staged(Changes):
    """The changes of the index, which the pre-commit hook checks: there, as in Letta's hook,
    a change of `.memfs.config.json` needs a person's say-so (`constraints.UPDATE_ENV`)."""


def staged(repo: MemoryRepo) -> Changes:
    """Files whose staged copy differs from HEAD: what the next commit would change. In
    git's pre-commit hook that is the index git names in GIT_INDEX_FILE (`git commit -a` and
    `git commit PATH` stage into another index file than .git/index)."""
    index_file = os.environ.get("GIT_INDEX_FILE")
    index = pygit2.Index(os.path.abspath(index_file)) if index_file else repo.git.index
    index.read()
    head = repo.paths("HEAD")
    changes: Changes = Staged()
    seen = set()
    for entry in index:
        seen.add(entry.path)
        if head.get(entry.path) != str(entry.id):
            changes[entry.path] = (repo.git[entry.id].data, repo.read(entry.path))
    for path in head:
        if path not in seen:
            changes[path] = (None, repo.read(path))
    return changes


def worktree(repo: MemoryRepo, only: Iterable[str] = ()) -> Changes:
    """Every file of the working tree (or just `only`), against its content at HEAD."""
    root = repo.root
    wanted = [p.strip("/") for p in only]
    if wanted:
        files = []
        for path in wanted:
            target = root / path
            if target.is_dir():
                files += [p.relative_to(root).as_posix() for p in target.rglob("*") if p.is_file()]
            elif target.is_file() or repo.read(path) is not None:
                files.append(path)
            else:
                raise MemrepoError(messages.VALIDATE_NO_SUCH_PATH.format(path=path))
    else:
        files = [p.relative_to(root).as_posix() for p in root.rglob("*")
                 if p.is_file() and ".git" not in p.relative_to(root).parts]
        files += [p for p in repo.paths("HEAD") if not (root / p).exists()]
    changes: Changes = {}
    for path in sorted(set(files)):
        target = root / path
        current = target.read_bytes() if target.is_file() else None
        changes[path] = (current, repo.read(path))
    return changes


def between(repo: MemoryRepo, base: str, target: str | None = None) -> Changes:
    """Files changed from `base` to `target` (the working tree when None)."""
    base_sha = _commit(repo, base)
    before = repo.files(base_sha)
    if target is None:
        after = {p: data for p, (data, _) in worktree(repo).items() if data is not None}
    else:
        after = repo.files(_commit(repo, target))
    return {p: (after.get(p), before.get(p))
            for p in sorted(set(before) | set(after)) if after.get(p) != before.get(p)}


def _commit(repo: MemoryRepo, rev: str) -> str:
    sha = repo.resolve(rev)
    if sha is None:
        raise MemrepoError(messages.VALIDATE_NO_BASE.format(base=rev))
    return sha


def memory_layout(repo: MemoryRepo, rev: str = "HEAD", changes: Changes | None = None) -> str:
    """The layout of memory at `rev`, or after `changes` on it: v2 where a root MEMORY.md is
    there before or after (Letta's hook looks at both), unless Letta's harness keeps this
    clone on v1 rules."""
    after = changes.get(layout.INDEX, (None, None))[0] if changes else None
    has_index = after is not None or repo.read(layout.INDEX, rev) is not None
    return layout.detect(has_index, layout.letta_policy(repo.git.path) if has_index else None)


def letta_constraints(repo: MemoryRepo, rev: str, changes: Changes | None = None) -> Constraints | None:
    """`.memfs.config.json` at `rev`, or as `changes` leave it, parsed (None: absent or
    invalid; validation reports an invalid one)."""
    data = repo.read(constraints.CONFIG_FILE, rev)
    if changes and constraints.CONFIG_FILE in changes:
        data = changes[constraints.CONFIG_FILE][0]
    if data is None:
        return None
    try:
        return constraints.parse(data.decode("utf-8"))
    except (constraints.ConstraintsError, UnicodeDecodeError):
        try:  # an invalid new file is reported; the old one's limits still hold
            old = repo.read(constraints.CONFIG_FILE, rev)
            return constraints.parse(old.decode("utf-8")) if old is not None and old != data else None
        except (constraints.ConstraintsError, UnicodeDecodeError):
            return None


def _root_sizes(repo: MemoryRepo, rev: str) -> dict[str, int]:
    """Characters of each root Markdown file at a commit: v2's core memory, as Letta counts it."""
    return {path: _chars(repo.git[blob].data)
            for path, blob in repo.paths(rev).items() if layout.is_core(path, V2)}


def _chars(data: bytes) -> int:
    text, _ = validate.decode(data)
    return len(text) if text is not None else len(data)


def check(repo: MemoryRepo, changes: Changes, base: str = "HEAD") -> list[validate.Problem]:
    """Validate `changes` made on top of `base`, under the policy they bring (or the base's),
    in the layout they leave, including the limit on all core memory together and, in v2,
    the indexes. The memory tool, sync's replay and `memrepo validate` all decide through here."""
    policy = repo.policy(base)
    new_config = changes.get(CONFIG_PATH, (None, None))[0]
    if new_config is not None:
        # A broken new config is reported as a problem of the file itself.
        with contextlib.suppress(PolicyError, UnicodeDecodeError):
            policy = parse_policy(new_config.decode("utf-8"))
    kind = memory_layout(repo, base, changes)
    letta = constraints.in_force(letta_constraints(repo, base, changes), kind)
    core = None
    tree = None
    had_root_index = False
    if kind == V2:
        before_paths = repo.paths(base)
        had_root_index = layout.INDEX in before_paths
        tree = set(before_paths)
        for path, (data, _) in changes.items():
            (tree.discard if data is None else tree.add)(path)
        changes = _with_newly_indexed(repo, changes, base, before_paths)
        if any(layout.is_core(path, V2) for path in changes):
            before = _root_sizes(repo, base)
            core = (sum(before.values()), _after(before, changes, V2))
    elif any(validate.is_core(path) for path in changes):
        before = repo.core_sizes(base)
        core = (sum(before.values()), _after(before, changes, "v1"))
    found = validate.validate_changes(changes, policy, core, layout=kind, letta=letta, tree=tree,
                                      had_root_index=had_root_index)
    approved = os.environ.get(constraints.UPDATE_ENV) == "1"
    if isinstance(changes, Staged) and constraints.CONFIG_FILE in changes and not approved:
        found = sorted([*found, validate.config_change_problem()], key=lambda p: p.path)
    return found


def _after(before: dict[str, int], changes: Changes, kind: str) -> int:
    after = dict(before)
    for path, (data, _) in changes.items():
        if layout.is_core(path, kind):
            if data is None:
                after.pop(path, None)
            else:
                after[path] = _chars(data)
    return sum(after.values())


def _with_newly_indexed(repo: MemoryRepo, changes: Changes, base: str, before: dict[str, str]) -> Changes:
    """In v2, a change that adds a MEMORY.md brings the files it indexes into memory (Letta's
    hook then checks their frontmatter): they are checked as unchanged files of the change."""
    added = [p for p, (data, head) in changes.items() if layout.is_index(p) and data is not None and head is None]
    if not added:
        return changes
    out = type(changes)(changes)
    for index in added:
        folder = index[: -len(layout.INDEX)]
        for path in before:
            if path not in out and path.startswith(folder) and layout.is_memory_file(path, V2):
                data = repo.read(path, base)
                out[path] = (data, data)
    return out
