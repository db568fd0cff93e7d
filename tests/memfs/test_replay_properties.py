"""Properties of `bot.memfs.sync.replay.replay` over real git repositories: any interleaving of
queued local commits, commits on the remote's main and syncs (one that pushes, one whose push
lost the race so its replayed commits are replayed again later) loses nothing. Each queued
commit either lands (its change is in the new tip) or is in the failed list, never both; one
that touches only files the remote did not touch always lands, and so does an item appended
to a shared list (lists merge as a union). Over the whole run, every local edit is on the
final main exactly once or was reported failed."""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import pygit2
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot import identity
from bot.memfs.create import init_repository
from bot.memfs.store.repo import MemoryRepo
from bot.memfs.sync.replay import replay

OWN = {"local": "reference/local.md", "remote": "reference/remote.md"}
SHARED = "system/shared.md"
COUNTER = "system/counter.md"
SEED = {
    OWN["local"]: "---\ndescription: notes only this clone writes\n---\n# Local\n",
    OWN["remote"]: "---\ndescription: notes only the other writers write\n---\n# Remote\n",
    SHARED: "---\ndescription: a list every writer adds to\n---\n# Shared\n\n- seed item\n",
    COUNTER: "---\ndescription: one line every writer replaces\n---\n# Counter\n\ncounter: 0\n",
}
TOKEN = re.compile(r"tok-[LR]\d{3}")
KINDS = st.sampled_from(("own", "shared", "counter"))
# A round: edits queued in the clone and edits on the remote's main (only their order within
# a side matters: the two sides are separate histories until a sync meets them), then a sync
# whose push lands or loses the race (its replayed commits stay queued for the next round).
ROUNDS = st.lists(st.tuples(st.lists(KINDS, min_size=1, max_size=5), st.lists(KINDS, min_size=1, max_size=5),
                            st.booleans()), min_size=1, max_size=4)


@dataclass
class World:
    """One repository holding both sides: `local` is the clone's main, `remote` the remote's."""

    repo: MemoryRepo
    local: str
    remote: str
    kinds: dict[str, str] = field(default_factory=dict)  # token -> kind, of local edits
    failed: set[str] = field(default_factory=set)  # local tokens replay reported failed
    count: int = 0

    def edit(self, side: str, kind: str) -> None:
        """One commit on `side` that writes a new token: an append to that side's own file or to
        the shared list, or the counter line replaced."""
        self.count += 1
        token = f"tok-{side[0].upper()}{self.count:03d}"
        tip = self.local if side == "local" else self.remote
        path = OWN[side] if kind == "own" else SHARED if kind == "shared" else COUNTER
        text = (self.repo.read(path, tip) or b"").decode()
        new = re.sub(r"(?m)^counter: .*$", f"counter: {token}", text) if kind == "counter" else text + f"- {token}\n"
        sha = self.repo.commit({path: new.encode()}, f"{kind} {token}", identity.agent(side),
                               parent=tip, update_worktree=False)
        if side == "local":
            self.local = sha
            self.kinds[token] = kind
        else:
            self.remote = sha

    def sync(self, pushed: bool) -> None:
        """Replay the queued commits onto the remote's main and check what became of each; with
        `pushed`, the remote takes the new tip (otherwise the replayed commits stay queued)."""
        g = self.repo.git
        if g.descendant_of(self.local, self.remote) or self.local == self.remote:
            if pushed:
                self.remote = self.local
            return
        if g.descendant_of(self.remote, self.local):
            self.local = self.remote
            return
        base = str(g.merge_base(self.local, self.remote))
        remote_touched = changed_paths(self.repo, base, self.remote)
        queued = commits_between(self.repo, self.remote, self.local)
        new_tip, moved, failed = replay(self.repo, self.local, self.remote)
        failed_ids = {str(c.id) for c, _ in failed}
        assert failed_ids <= {str(c.id) for c in queued}
        assert not failed_ids & set(moved)  # a commit is replayed or failed, never both
        landed = {token_of(c) for c in commits_between(self.repo, self.remote, new_tip)}
        assert len(moved) == len(landed)
        for commit in queued:
            token, paths = token_of(commit), changed_paths(self.repo, str(commit.parents[0].id), str(commit.id))
            lands = token in landed and adds(self.repo, new_tip, self.remote, token)
            is_failed = str(commit.id) in failed_ids
            assert lands != is_failed, (token, lands, is_failed)
            if not paths & remote_touched:
                assert lands, (token, "touches nothing the remote touched", failed)
            if self.kinds[token] == "shared":
                assert lands, (token, "an appended list item", failed)
            if lands and self.kinds[token] != "counter":
                path = SHARED if self.kinds[token] == "shared" else OWN["local"]
                assert (self.repo.read(path, new_tip) or b"").decode().count(token) == 1
            if is_failed:
                self.failed.add(token)
        self.local = new_tip
        if pushed:
            self.remote = new_tip


def commits_between(repo: MemoryRepo, hide: str, tip: str) -> list[pygit2.Commit]:
    walker = repo.git.walk(tip, pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.REVERSE)
    walker.hide(hide)
    return list(walker)


def changed_paths(repo: MemoryRepo, old: str, new: str) -> set[str]:
    diff = repo.git.diff(old, new)
    return {d.new_file.path or d.old_file.path for d in diff.deltas}


def token_of(commit: pygit2.Commit) -> str:
    found = TOKEN.search(commit.message)
    assert found, commit.message
    return found.group(0)


def added_lines(repo: MemoryRepo, commit: pygit2.Commit) -> list[str]:
    diff = repo.git.diff(commit.parents[0], commit, context_lines=0)
    return [line.content for patch in diff for hunk in patch.hunks for line in hunk.lines if line.origin == "+"]


def adds(repo: MemoryRepo, tip: str, hide: str, token: str) -> bool:
    """Whether exactly one commit of hide..tip adds a line with `token`."""
    return sum(any(token in line for line in added_lines(repo, c)) for c in commits_between(repo, hide, tip)) == 1


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ROUNDS)
def test_any_interleaving_of_queued_and_remote_commits_loses_nothing(
        rounds: list[tuple[list[str], list[str], bool]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        repo = init_repository(Path(tmp) / "memory", "p1")
        head = repo.head_sha()
        assert head is not None
        seed = repo.commit({p: t.encode() for p, t in SEED.items()}, "seed", identity.agent("p1"), parent=head)
        world = World(repo, seed, seed)
        for local, remote, pushed in rounds:
            for kind in local:
                world.edit("local", kind)
            for kind in remote:
                world.edit("remote", kind)
            world.sync(pushed)
        world.sync(pushed=True)
        assert world.local == world.remote
        history = commits_between(repo, seed, world.remote)
        for token in world.kinds:
            adding = [c for c in history if token in c.message and any(token in ln for ln in added_lines(repo, c))]
            on_main = len(adding) == 1
            assert on_main != (token in world.failed), (token, len(adding), token in world.failed)
            assert len(adding) <= 1, token
