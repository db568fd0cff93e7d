"""The integrator's git side: one bare mirror per repository under the work folder, kept up to
date by fetching exactly the refs a job looks at; validation of a pull request's head against
its base; and resolution of conflicts with the base, pushed to the pull request's branch.

Everything runs in-process through libgit2 (pygit2), the fetch and the push included, and
over git objects, not in a checked-out worktree: a tree read from the object store is as clean
as a fresh worktree (nothing left over from an earlier job can leak in), costs no checkout, and
two jobs never share a working tree.
The validator is the memory core's own (`checks.check`, the pre-commit hook's rules) over the
changes the pull request makes since its merge base, on top of the current base: what `main`
would become. Pushes are never forced: a resolution is a merge commit whose first parent is
the pull request's head, so the push is a fast-forward, and a head that moved meanwhile gets
it refused (then the job re-reads and decides again).
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pygit2

from bot.config import Policy
from bot.errors import MemrepoError
from bot.file_lock import folder_lock
from bot.identity import INTEGRATOR
from bot.integrator import texts
from bot.integrator.claims import Brought, claim_shown
from bot.integrator.context import Remote
from bot.integrator.state import Validation
from bot.memfs import MemoryRepo, Resolver, checks, resolve_tree
from bot.memfs.sync import HeaderCallbacks, fetch_from, libgit2_timeouts, redact
from bot.trailers import external_sources

INTEGRATOR_RESOLUTION_COMMIT = """\
Merge {base} into {branch}: conflicts resolved by memrepo

Markdown-aware three-way merge (frontmatter key by key, lists as a union) of the files both
sides changed; validated before it was pushed.

Files both sides changed:
{paths}{notes}
"""
# Merging in batches (bot/integrator/jobs.py merge_ready, workspace.merge_onto)
INTEGRATOR_BATCH_RESOLVED = (
    "{title}\n\nConflicts with the branch as the batch before it left it were resolved in this merge commit, "
    "by the integrator's markdown-aware merge:\n\n{paths}{notes}")
INTEGRATOR_PUSH_REFUSED = "the forge refused the push to {ref} of {repo}: {answer}"

log = logging.getLogger("memrepo.integrator.workspace")

BASE_REFS = "refs/memrepo/base/"
PULL_REFS = "refs/memrepo/pull/"
# what libgit2 says when the branch is not where this push expects it
MOVED = ("non-fastforward", "non-fast-forward", "not present locally", "fetch first")  # not said: libgit2's, matched


class WorkspaceError(MemrepoError):
    """A git operation of the workspace failed (fetch, push); the message says which and why."""


class PushRefused(WorkspaceError):
    """The forge refused a push for a reason other than the branch having moved (a rule of a
    protected branch): pushing again will not help."""


@dataclass(frozen=True)
class Fetched:
    """What a fetch found: the base branch's tip and the pull request's head as the forge has
    them now (None when the ref is gone)."""

    base_sha: str | None
    head_sha: str | None


@dataclass(frozen=True)
class ResolveOutcome:
    """A resolution: `pushed` is the new head (a merge commit by the integrator) when it was
    pushed (with `validation`, the verdict on it); `stale` when the head moved before the push
    (re-read); else `conflicts` (path -> why) or `problems` (the merged tree does not validate)
    for a person."""

    pushed: str | None = None
    validation: Validation | None = None
    stale: bool = False
    conflicts: dict[str, tuple[str, ...]] = field(default_factory=dict)
    problems: tuple[str, ...] = ()
    notes: dict[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class _Merge:
    """A three-way merge of the trees: the tree the rules make on the head's (None when a file
    stays in conflict), the conflicts (path -> why) and the rules' notes, the files both sides
    changed and the files written."""

    tree_id: pygit2.Oid | None
    conflicts: dict[str, tuple[str, ...]]
    notes: dict[str, tuple[str, ...]]
    both: list[str] = field(default_factory=list)
    written: tuple[str, ...] = ()


def _text(data: bytes) -> str:
    """Memory files are UTF-8; anything else goes through the resolver byte-for-byte."""
    return data.decode("utf-8", "surrogateescape")


def _bytes(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


class Workspace:
    """The bare mirror of one repository (`<work_dir>/<owner>/<name>.git`). Callers hold the
    repository's lock while they use it (the integrator acts on a repository in one place at a
    time); a file lock also keeps two processes on one machine from fetching into it at once."""

    def __init__(self, work_dir: Path, repo: str, remote: Remote) -> None:
        owner, _, name = repo.lower().partition("/")
        self.repo = repo
        self.remote = remote
        self.path = Path(work_dir) / owner / f"{name}.git"

    # ------------------------------------------------------------------------------ git
    def _ensure(self) -> None:
        if (self.path / "HEAD").is_file():
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            git = pygit2.init_repository(str(self.path), bare=True)
            git.config["gc.auto"] = 0  # a job must not pause for a gc; `memrepo` runs none
        except (pygit2.GitError, OSError) as exc:
            raise WorkspaceError(texts.INTEGRATOR_GIT_FAILED.format(what="init", repo=self.repo,
                                                                    problem=exc)) from exc

    def memory(self) -> MemoryRepo:
        """The mirror as a MemoryRepo (reopened, so objects fetched since are seen)."""
        return MemoryRepo(self.path, pygit2.Repository(str(self.path)))

    def has(self, sha: str) -> bool:
        try:
            return isinstance(pygit2.Repository(str(self.path)).get(sha), pygit2.Commit)
        except (ValueError, pygit2.GitError, FileNotFoundError):
            return False

    # ------------------------------------------------------------------------------ fetch
    def fetch(self, base_ref: str, number: int | None = None) -> Fetched:
        """Fetch the base branch and, with `number`, the pull request's head (GitHub keeps
        `refs/pull/N/head` for every pull request, whatever happens to its branch).

        In-process, through libgit2: a job fetches every time `main` moved, and `git fetch`
        starts five processes to do it (fetch, the HTTP helper twice, the connectivity check,
        auto-maintenance), about 35 ms of CPU against 2 ms here. The token goes in a header on
        the first request, as in the push."""
        base, heads = self.fetch_heads(base_ref, [] if number is None else [number])
        return Fetched(base, heads.get(int(number)) if number is not None else None)

    def fetch_heads(self, base_ref: str, numbers: list[int]) -> tuple[str | None, dict[int, str | None]]:
        """The base branch's tip and each pull request's head as the forge has them now, in
        one fetch (one git request, not one REST read per pull request)."""
        refspecs = [f"+refs/heads/{base_ref}:{BASE_REFS}{base_ref}"]
        refspecs += [f"+refs/pull/{int(n)}/head:{PULL_REFS}{int(n)}" for n in numbers]
        with folder_lock(self.path):
            self._ensure()
            git = pygit2.Repository(str(self.path))
            for spec in refspecs:  # libgit2 skips a ref the forge no longer has: say so with None
                with contextlib.suppress(KeyError):
                    git.references.delete(spec.partition(":")[2])
            try:
                fetch_from(git, self.remote.url, refspecs, self.remote.auth_header())
            except (pygit2.GitError, ValueError) as exc:
                raise WorkspaceError(texts.INTEGRATOR_GIT_FAILED.format(what="fetch", repo=self.repo,
                                                                        problem=redact(str(exc)))) from exc
        git = pygit2.Repository(str(self.path))

        def tip(ref: str) -> str | None:
            try:
                return str(git.references[ref].peel(pygit2.Commit).id)
            except (KeyError, pygit2.GitError):
                return None

        return tip(f"{BASE_REFS}{base_ref}"), {int(n): tip(f"{PULL_REFS}{int(n)}") for n in numbers}

    def merge_onto(self, tip: str, head_sha: str, title: str, policy: Policy,
                   resolver: Resolver | None = None) -> tuple[str | None, list[str]]:
        """A merge commit by the integrator whose first parent is `tip` (the branch as the
        batch has built it so far) and second `head_sha` (the pull request's head), so the
        forge sees that head reach the branch. Conflicts are resolved in this commit by the
        same markdown-aware merge a branch resolution uses, and its message says what
        conflicted and how, under GitHub's own merge title. (None, why) when the rules cannot
        resolve it or what it makes does not validate."""
        git = self.memory().git
        head = git[head_sha].peel(pygit2.Commit)
        onto = git[tip].peel(pygit2.Commit)
        index = git.merge_commits(onto.id, head.id)
        message = title
        if index.conflicts is None:
            tree_id = index.write_tree(git)
        else:
            merge = self._three_way(tip, head_sha, policy, resolver)
            if merge.tree_id is None:
                return None, [f"{path}: {why}" for path, whys in sorted(merge.conflicts.items()) for why in whys]
            tree_id = merge.tree_id
            if merge.both:
                message = INTEGRATOR_BATCH_RESOLVED.format(title=title, paths=_listed(merge.both),
                                                           notes=_notes(merge.notes))
        who = pygit2.Signature(INTEGRATOR.name, INTEGRATOR.email, int(time.time()), 0)
        merged = str(git.create_commit(None, who, who, message.rstrip("\n") + "\n", tree_id, [onto.id, head.id]))
        verdict = self.validate(tip, merged)
        if not verdict.valid:
            return None, list(verdict.problems)
        return merged, []

    # ------------------------------------------------------------------------------ reading
    def merge_base(self, base_sha: str, head_sha: str) -> str | None:
        git = pygit2.Repository(str(self.path))
        found = git.merge_base(base_sha, head_sha)
        return None if found is None else str(found)

    def merges_cleanly(self, base_sha: str, head_sha: str) -> bool | None:
        """Whether git merges the two without a conflict (None: a commit is missing here). A
        trial merge in memory: nothing is written."""
        git = pygit2.Repository(str(self.path))
        try:
            index = git.merge_commits(base_sha, head_sha)
        except (KeyError, ValueError, pygit2.GitError):
            return None
        return index.conflicts is None

    def changed_paths(self, base_sha: str, head_sha: str) -> tuple[str, ...]:
        """Paths the pull request changes: its head against the merge base with the base, as
        GitHub's "files changed" shows them (changes the base made meanwhile are not its)."""
        repo = self.memory()
        since = self.merge_base(base_sha, head_sha) or base_sha
        return tuple(checks.between(repo, since, head_sha))

    def brought(self, base_sha: str, head_sha: str) -> list[Brought]:
        """The commits the pull request brings: those reachable from its head and not from
        its base (what merging it adds to the base's history), oldest first. When the base is
        not here, every commit of the head counts (reading one commit too many asks a person
        once too often; one too few could let something through)."""
        git = pygit2.Repository(str(self.path))
        walker = git.walk(head_sha, pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.REVERSE)
        try:
            walker.hide(base_sha)
        except (KeyError, ValueError, pygit2.GitError):
            log.warning("%s: base %s not in the mirror; reading every commit of %s", self.repo, base_sha[:12],
                        head_sha[:12])
        return [Brought(commit.author.email, commit.raw_message.decode("utf-8", "replace"), len(commit.parent_ids))
                for commit in walker]

    def commit_facts(self, base_sha: str, head_sha: str, head_ref: str) -> dict[str, object]:
        """What decide reads from the commits brought: the `external:` sources their `Source`
        trailers name, and whether they show what the branch claims (`claims.claim_shown`).
        A resolution by the integrator names no source of its own and hides none: its first
        parent is the old head, so the commits it merged stay in the range."""
        brought = self.brought(base_sha, head_sha)
        return {"untrusted_sources": external_sources(commit.message for commit in brought),
                "claim_shown": claim_shown(head_ref, brought)}

    def policy(self, base_sha: str) -> Policy:
        return self.memory().policy(base_sha)

    def validate(self, base_sha: str, head_sha: str) -> Validation:
        """The validator's verdict on what merging `head_sha` into `base_sha` brings: the
        changes since their merge base, checked on top of the base under its policy (or the
        one the change brings) with the limit on all of system/ together."""
        repo = self.memory()
        since = self.merge_base(base_sha, head_sha) or base_sha
        changes = checks.between(repo, since, head_sha)
        try:
            problems = checks.check(repo, changes, base_sha)
        except MemrepoError as exc:  # e.g. the base's own policy file is broken
            return Validation(head_sha, False, (str(exc),))
        return Validation(head_sha, not problems, tuple(f"{p.path}: {p.message}" for p in problems))

    # ------------------------------------------------------------------------------ resolving
    def _three_way(self, base_sha: str, head_sha: str, policy: Policy, resolver: Resolver | None) -> _Merge:
        """The markdown-aware three-way merge of `base_sha` into `head_sha` (`resolve_tree`),
        built on the head's tree when the rules resolve every file: what a branch resolution
        and a batch's merge commit both commit."""
        repo = self.memory()
        since = self.merge_base(base_sha, head_sha)
        base_files = repo.files(since) if since else {}
        ours, theirs = repo.files(head_sha), repo.files(base_sha)
        ours_text = {p: _text(d) for p, d in ours.items()}
        tree = resolve_tree({p: _text(d) for p, d in base_files.items()}, ours_text,
                            {p: _text(d) for p, d in theirs.items()}, policy.merge_instructions,
                            resolver=resolver, policy=policy)
        if not tree.clean:
            return _Merge(None, dict(tree.conflicts), dict(tree.notes))
        both = [p for p in sorted(set(ours) | set(theirs))
                if base_files.get(p) not in (ours.get(p), theirs.get(p)) and ours.get(p) != theirs.get(p)]
        writes = {p: (None if t is None else _bytes(t)) for p, t in tree.writes(ours_text).items()}
        head = repo.git[head_sha].peel(pygit2.Commit)
        return _Merge(repo.build_tree(head.tree, writes), {}, dict(tree.notes), both, tuple(sorted(writes)))

    def resolve(self, base_sha: str, head_sha: str, head_ref: str, policy: Policy,
                resolver: Resolver | None = None) -> ResolveOutcome:
        """Bring `base_sha` into the pull request's branch at `head_sha`: a markdown-aware
        three-way merge of the trees (`resolve_tree`), committed by the integrator with both
        parents, validated, and pushed to `head_ref` (never forced)."""
        git = self.memory().git
        merge = self._three_way(base_sha, head_sha, policy, resolver)
        if merge.tree_id is None:
            return ResolveOutcome(conflicts=merge.conflicts, notes=merge.notes)
        now = (int(time.time()), 0)
        who = pygit2.Signature(INTEGRATOR.name, INTEGRATOR.email, *now)
        message = INTEGRATOR_RESOLUTION_COMMIT.format(branch=head_ref, base=base_sha[:12],
                                                      paths=_listed(merge.both or sorted(merge.written)),
                                                      notes=_notes(merge.notes))
        merged = str(git.create_commit(None, who, who, message, merge.tree_id, [
            git[head_sha].peel(pygit2.Commit).id, git[base_sha].peel(pygit2.Commit).id]))
        verdict = self.validate(base_sha, merged)
        if not verdict.valid:
            return ResolveOutcome(problems=verdict.problems, notes=merge.notes)
        pushed = self.push(merged, head_ref)
        if not pushed:
            return ResolveOutcome(stale=True)
        return ResolveOutcome(pushed=merged, validation=verdict, notes=merge.notes)

    def push(self, sha: str, branch: str) -> bool:
        """Push `sha` to `branch` as a fast-forward; False when the forge refuses it because the
        branch moved (the caller re-reads), a `PushRefused` when the forge refuses it for
        another reason (a protected branch), an error for anything else. In-process through
        libgit2, like the fetch; it refuses a non-fast-forward itself, and the forge refuses
        an update whose old value is no longer the branch's."""
        ref = f"refs/heads/{branch.removeprefix('refs/heads/')}"
        callbacks = _PushCallbacks(self.remote.auth_header())
        libgit2_timeouts()
        with folder_lock(self.path):
            git = pygit2.Repository(str(self.path))
            try:
                git.remotes.create_anonymous(self.remote.url).push([f"{sha}:{ref}"], callbacks=callbacks,
                                                                   proxy=True)
            except (pygit2.GitError, ValueError) as exc:
                problem = str(exc)
                if any(word in problem.lower() for word in MOVED):
                    log.info("push of %s to %s refused: the branch moved (%s)", sha[:12], ref, problem)
                    return False
                raise WorkspaceError(texts.INTEGRATOR_GIT_FAILED.format(what="push", repo=self.repo,
                                                                        problem=redact(problem))) from exc
        refused = callbacks.refused.get(ref)
        if refused is not None:
            log.info("push of %s to %s refused by the forge: %s", sha[:12], ref, refused)
            if any(word in refused.lower() for word in (*MOVED, "stale info", "fetch first")):
                return False
            raise PushRefused(INTEGRATOR_PUSH_REFUSED.format(ref=ref, repo=self.repo, answer=refused))
        return True


class _PushCallbacks(HeaderCallbacks):
    """The header, and what the forge said of each ref it did not update."""

    def __init__(self, header: str | None) -> None:
        super().__init__(header)
        self.refused: dict[str, str] = {}

    def push_update_reference(self, refname: str, message: str | None) -> None:
        if message:
            self.refused[refname] = message


def _listed(paths: list[str]) -> str:
    return "\n".join(f"- {p}" for p in paths) or "-"


def _notes(notes: Mapping[str, tuple[str, ...]]) -> str:
    lines = [f"- {path}: {note}" for path, items in sorted(notes.items()) for note in items]
    return ("\n\n" + "\n".join(lines)) if lines else ""
