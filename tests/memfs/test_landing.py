"""The landing index (bot/memfs/history/timeline.py): where each commit main contains landed on main's
first-parent chain, which `memrepo why` asks of every line's commit. Its answers must be those
of the definition (`definition` below, a binary search of ancestry checks): on small graphs by
table, on random graphs against a naive reading of the definition, and on real git histories
with merges of merges, criss-cross merges, main moving forward and main rewritten."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pygit2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.memfs.create import init_repository
from bot.memfs.history.travel import main_landings, main_ref, main_timeline, timeline
from bot.memfs.store.repo import MemoryRepo
from tests.conftest import git


# ------------------------------------------------------------------------------ the pure core
def ids(text: str) -> list[bytes]:
    return [name.encode() for name in text.split()]


def graph_of(edges: dict[str, str]) -> dict[bytes, list[bytes]]:
    return {name.encode(): ids(parents) for name, parents in edges.items()}


def landed_names(edges: dict[str, str], chain: str, start: int = 0, known: str = "") -> dict[str, int]:
    graph = graph_of(edges)
    before = set(ids(known))
    found = timeline.new_landings(ids(chain), start, lambda c: graph[c], before.__contains__)
    return {raw.decode(): position for raw, position in found.items()}


@pytest.mark.parametrize(("edges", "chain", "start", "known", "expected"), [
    # a straight line: each commit lands at itself
    ({"a": "", "b": "a", "c": "b"}, "a b c", 0, "", {"a": 0, "b": 1, "c": 2}),
    # a pull request's two commits land with its merge
    ({"a": "", "x": "a", "y": "x", "m": "a y"}, "a m", 0, "", {"a": 0, "m": 1, "x": 1, "y": 1}),
    # a branch that merged main in before it was merged: main's commits keep their own landing
    ({"a": "", "b": "a", "x": "a", "y": "x b", "m": "b y"}, "a b m", 0, "", {"a": 0, "b": 1, "m": 2, "x": 2, "y": 2}),
    # a merge of a merge: everything under the second parent lands with the outer merge
    ({"a": "", "p": "a", "q": "a", "r": "p q", "m": "a r"}, "a m", 0, "",
     {"a": 0, "m": 1, "p": 1, "q": 1, "r": 1}),
    # a commit reachable from two later merges lands with the first of them
    ({"a": "", "x": "a", "m1": "a x", "y": "x", "m2": "m1 y"}, "a m1 m2", 0, "",
     {"a": 0, "m1": 1, "x": 1, "m2": 2, "y": 2}),
    # extending: only what the new positions bring in, the known commits are not visited again
    ({"a": "", "x": "a", "m1": "a x", "y": "x", "m2": "m1 y"}, "a m1 m2", 2, "a x m1", {"m2": 2, "y": 2}),
])
def test_new_landings(edges: dict[str, str], chain: str, start: int, known: str, expected: dict[str, int]) -> None:
    assert landed_names(edges, chain, start, known) == expected


@st.composite
def histories(draw: st.DrawFn) -> tuple[dict[bytes, list[bytes]], list[bytes]]:
    """A random commit graph (each commit's parents are older commits) and the first-parent
    chain from its newest commit."""
    count = draw(st.integers(1, 25))
    graph: dict[bytes, list[bytes]] = {b"c0": []}
    for i in range(1, count):
        first = draw(st.integers(0, i - 1))
        others = draw(st.lists(st.integers(0, i - 1), max_size=2, unique=True))
        graph[b"c%d" % i] = [b"c%d" % p for p in [first, *[o for o in others if o != first]]]
    chain = [b"c%d" % (count - 1)]
    while graph[chain[-1]]:
        chain.append(graph[chain[-1]][0])
    chain.reverse()
    return graph, chain


def ancestors(graph: dict[bytes, list[bytes]], tip: bytes) -> set[bytes]:
    seen, todo = set(), [tip]
    while todo:
        c = todo.pop()
        if c not in seen:
            seen.add(c)
            todo += graph[c]
    return seen


@given(histories(), st.data())
@settings(max_examples=200)
def test_new_landings_is_the_first_chain_commit_that_contains_it(
        history: tuple[dict[bytes, list[bytes]], list[bytes]], data: st.DataObject) -> None:
    graph, chain = history
    expected: dict[bytes, int] = {}
    for position, tip in enumerate(chain):
        for commit in ancestors(graph, tip):
            expected.setdefault(commit, position)
    assert timeline.new_landings(chain, 0, graph.__getitem__, lambda _c: False) == expected
    split = data.draw(st.integers(0, len(chain)))  # built up to `split`, then extended
    known = {c for c, p in expected.items() if p < split}
    assert timeline.new_landings(chain, split, graph.__getitem__, known.__contains__) == {
        c: p for c, p in expected.items() if p >= split}


# ------------------------------------------------------------------------------ real git
def commit(root: Path, name: str, message: str) -> str:
    (root / "reference").mkdir(exist_ok=True)
    (root / "reference" / f"{name}.md").write_text(f"---\ndescription: {name}\n---\n{message}\n", encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "--no-verify", "-m", message)
    return git(root, "rev-parse", "HEAD").strip()


def merge(root: Path, branch: str, message: str) -> str:
    env = {**os.environ, "GIT_MERGE_AUTOEDIT": "no"}
    subprocess.run(["git", "merge", "-q", "--no-ff", "--no-verify", "-m", message, branch], cwd=root, env=env,
                   check=True, capture_output=True)
    return git(root, "rev-parse", "HEAD").strip()


def every_commit(root: Path) -> list[str]:
    return git(root, "rev-list", "--all").split()


def definition(chain: timeline.Timeline, git: pygit2.Repository, sha: str) -> int | None:
    """Position of the first commit of the chain that contains `sha` (it, or a merge that
    brought it in), None when main does not contain it. Containment only grows along the
    chain, so this is a binary search of ancestry checks."""
    target = pygit2.Oid(hex=sha)

    def contains(position: int) -> bool:
        oid = pygit2.Oid(raw=chain.raw(position))
        return oid == target or git.descendant_of(oid, target)

    lo, hi = 0, len(chain)
    if hi == 0 or not contains(hi - 1):
        return None
    while lo < hi:
        mid = (lo + hi) // 2
        if contains(mid):
            hi = mid
        else:
            lo = mid + 1
    return lo


def assert_same_as_the_definition(root: Path) -> timeline.Landings:
    repo = MemoryRepo.open(root)
    ref, tip = main_ref(repo)
    chain = main_timeline(repo, ref, tip)
    landings = main_landings(repo, ref, chain)
    for sha in every_commit(root):
        assert landings.position(sha) == definition(chain, repo.git, sha), sha
    return landings


@pytest.fixture
def memory(tmp_path: Path) -> Path:
    root = init_repository(tmp_path / "memory", "a1", "Ada").root
    git(root, "config", "user.name", "Pat Person")
    git(root, "config", "user.email", "pat@example.com")
    return root


def test_the_index_answers_as_the_ancestry_search_on_merges_of_merges(memory: Path) -> None:
    root = memory
    commit(root, "one", "One on main")
    git(root, "checkout", "-q", "-b", "feature")
    commit(root, "two", "Two on a branch")
    git(root, "checkout", "-q", "-b", "inner")
    commit(root, "three", "Three on a branch of the branch")
    git(root, "checkout", "-q", "feature")
    merge(root, "inner", "Merge inner into feature")
    git(root, "checkout", "-q", "main")
    commit(root, "four", "Four on main meanwhile")
    git(root, "checkout", "-q", "feature")
    merge(root, "main", "Merge main into feature")  # main's commits in a branch: they keep their own landing
    git(root, "checkout", "-q", "main")
    landed = merge(root, "feature", "Merge feature")
    git(root, "checkout", "-q", "-b", "criss", "HEAD~1")
    criss = commit(root, "five", "Five")
    git(root, "checkout", "-q", "main")
    commit(root, "six", "Six")
    git(root, "checkout", "-q", "-b", "cross")
    merge(root, "criss", "Criss")
    git(root, "checkout", "-q", "criss")
    merge(root, "main", "Cross")
    git(root, "checkout", "-q", "main")
    merge(root, "criss", "Merge criss")
    git(root, "checkout", "-q", "-b", "never", "HEAD~2")
    unmerged = commit(root, "seven", "Never merged")
    git(root, "checkout", "-q", "main")

    landings = assert_same_as_the_definition(root)
    repo = MemoryRepo.open(root)
    chain = main_timeline(repo, *main_ref(repo))
    three = git(root, "log", "--format=%H", "--grep", "^Three", "--all").strip()
    assert chain.sha(landings.position(three)) == landed  # a branch of a branch lands with the outer merge
    assert landings.position(unmerged) is None and landings.position(criss) is not None
    assert landings.position("0" * 40) is None


def test_the_index_follows_main_forward_and_is_rebuilt_when_main_is_rewritten(memory: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    root = memory
    walks: list[int] = []  # where each walk of the history started: 0 is a build from the root
    walk = timeline.new_landings

    def counted(chain: Any, start: int, *rest: Any) -> dict[bytes, int]:
        walks.append(start)
        return walk(chain, start, *rest)

    monkeypatch.setattr(timeline, "new_landings", counted)
    commit(root, "one", "One")
    first = assert_same_as_the_definition(root)
    cache = root / ".git" / "memrepo" / "landing-refs-heads-main.bin"
    assert cache.is_file()
    git(root, "checkout", "-q", "-b", "side")
    side = commit(root, "two", "Two on a branch")
    git(root, "checkout", "-q", "main")
    commit(root, "three", "Three")
    merged = merge(root, "side", "Merge side")
    grown = assert_same_as_the_definition(root)  # extended from the cached index
    assert grown.length == first.length + 2 and len(grown) == len(first) + 3
    assert walks[-1] == first.length  # the walk started where the cached index ended
    repo = MemoryRepo.open(root)
    assert grown.position(side) == definition(main_timeline(repo, *main_ref(repo)), repo.git, merged)
    # main rewritten (reset to before the merge, then another commit): rebuilt, not trusted
    git(root, "reset", "-q", "--hard", "HEAD~1")
    commit(root, "four", "Four instead")
    rebuilt = assert_same_as_the_definition(root)
    assert rebuilt.position(side) is None and rebuilt.position(merged) is None
    assert walks[-1] == 0  # rebuilt from the root
    # a damaged index is only a slower answer
    cache.write_bytes(b"garbage")
    assert_same_as_the_definition(root)
    cache.write_bytes(cache.read_bytes()[:-3])
    assert_same_as_the_definition(root)
    # damage that keeps the file's length: every position made one no chain has
    whole = cache.read_bytes()
    count = int(whole.split(b"\n")[1].split()[1])
    positions = len(whole) - 4 - 4 * count
    cache.write_bytes(whole[:positions] + b"\xff" * (4 * count) + whole[-4:])
    assert_same_as_the_definition(root)
