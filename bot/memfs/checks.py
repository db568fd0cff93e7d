"""Gather what `memrepo validate` checks from the repository (the staged index, the working
tree, or a range of commits) and hand it to the pure validator."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable

import pygit2

from bot import messages
from bot.config import CONFIG_PATH, PolicyError, parse_policy
from bot.errors import MemrepoError
from bot.memfs import validate
from bot.memfs.repo import MemoryRepo

Changes = dict[str, tuple[bytes | None, bytes | None]]


def staged(repo: MemoryRepo) -> Changes:
    """Files whose staged copy differs from HEAD: what the next commit would change. In
    git's pre-commit hook that is the index git names in GIT_INDEX_FILE (`git commit -a` and
    `git commit PATH` stage into another index file than .git/index)."""
    index_file = os.environ.get("GIT_INDEX_FILE")
    index = pygit2.Index(os.path.abspath(index_file)) if index_file else repo.git.index
    index.read()
    head = repo.paths("HEAD")
    changes: Changes = {}
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


def check(repo: MemoryRepo, changes: Changes, base: str = "HEAD") -> list[validate.Problem]:
    """Validate `changes` made on top of `base`, under the policy they bring (or the base's),
    including the limit on all of system/ together. The memory tool, sync's replay and
    `memrepo validate` all decide through here."""
    policy = repo.policy(base)
    new_config = changes.get(CONFIG_PATH, (None, None))[0]
    if new_config is not None:
        # A broken new config is reported as a problem of the file itself.
        with contextlib.suppress(PolicyError, UnicodeDecodeError):
            policy = parse_policy(new_config.decode("utf-8"))
    core = None
    if any(validate.is_core(path) for path in changes):
        before = repo.core_sizes(base)
        after = dict(before)
        for path, (data, _) in changes.items():
            if validate.is_core(path):
                if data is None:
                    after.pop(path, None)
                else:
                    after[path] = validate.core_size({path: data})
        core = (sum(before.values()), sum(after.values()))
    return validate.validate_changes(changes, policy, core)
