"""localhub's history helpers agree with git's own answers on arbitrary commit graphs."""

from __future__ import annotations

import pygit2
from hypothesis import given, settings
from hypothesis import strategies as st

from localhub import merging

SIGNATURE = pygit2.Signature("t", "t@example.com", 1_700_000_000, 0)


@st.composite
def graphs(draw: st.DrawFn) -> list[tuple[int, ...]]:
    """Parents per commit, each an earlier commit: a DAG with merges and several roots."""
    size = draw(st.integers(1, 25))
    parents: list[tuple[int, ...]] = []
    for i in range(size):
        if i == 0:
            parents.append(())
            continue
        chosen = draw(st.lists(st.integers(0, i - 1), max_size=2, unique=True))
        parents.append(tuple(chosen))
    return parents


def _build(path: str, parents: list[tuple[int, ...]]) -> list[str]:
    git = pygit2.init_repository(path, bare=True)
    tree = git.TreeBuilder().write()
    shas: list[str] = []
    for i, ps in enumerate(parents):
        # distinct messages give distinct commits even where the parents are the same
        shas.append(str(git.create_commit(None, SIGNATURE, SIGNATURE, f"c{i}", tree, [shas[p] for p in ps])))
    return shas


def _holds(git: pygit2.Repository, tip: str, commit: str) -> bool:
    """git's own answer: `commit` is `tip` or one of its ancestors."""
    return tip == commit or git.descendant_of(tip, commit)


@settings(max_examples=60, deadline=None)
@given(data=st.data(), parents=graphs())
def test_tips_containing_matches_descendant_of(tmp_path_factory, data: st.DataObject,
                                               parents: list[tuple[int, ...]]) -> None:
    path = str(tmp_path_factory.mktemp("graph") / "repo.git")
    shas = _build(path, parents)
    git = pygit2.Repository(path)
    picks = data.draw(st.lists(st.integers(0, len(shas) - 1), min_size=1, max_size=8))
    tips = {f"b{n}": shas[i] for n, i in enumerate(picks)}
    commit = shas[data.draw(st.integers(0, len(shas) - 1))]
    expected = {name for name, tip in tips.items() if _holds(git, tip, commit)}
    assert merging.tips_containing(git, commit, tips) == expected


def test_tips_containing_an_unknown_commit_is_none(tmp_path) -> None:
    shas = _build(str(tmp_path / "repo.git"), [(), (0,)])
    git = pygit2.Repository(str(tmp_path / "repo.git"))
    assert merging.tips_containing(git, "0" * 40, {"main": shas[1]}) == set()


@settings(max_examples=60, deadline=None)
@given(data=st.data(), parents=graphs())
def test_held_by_matches_descendant_of_from_any_earlier_tip(tmp_path_factory, data: st.DataObject,
                                                             parents: list[tuple[int, ...]]) -> None:
    path = str(tmp_path_factory.mktemp("graph") / "repo.git")
    shas = _build(path, parents)
    git = pygit2.Repository(path)
    index = st.integers(0, len(shas) - 1)
    old_tip, tip = shas[data.draw(index)], shas[data.draw(index)]
    commits = {shas[i] for i in data.draw(st.lists(index, max_size=8))}
    earlier = {shas[i] for i in data.draw(st.lists(index, max_size=8))}
    previous = (old_tip, merging.held_by(git, old_tip, earlier))
    assert previous[1] == {c: _holds(git, old_tip, c) for c in earlier}
    assert merging.held_by(git, tip, commits, previous) == {c: _holds(git, tip, c) for c in commits}
