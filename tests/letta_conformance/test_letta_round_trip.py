"""The round trip between Letta Code and memrepo, in both layouts, on localhub with the integrator.

Letta's side is Letta Code's own published code: its memory tool writes, `git commit` runs its
pre-commit hook, and its post-commit hook (what `/memory-repository set` installs) pushes in the
background. memrepo's side is `memrepo follow --once` on Letta's folder, a teammate's clone whose
dream the integrator merges (its job run in-process), and a person's edit through the forge's
contents API. At the end Letta's folder, the forge's main and the teammate's clone hold one tree,
and every commit each of them made is on main by its sha. When Letta and a dream change the same
line, follow sets Letta's commit aside on a ref it names, and nothing is lost.
"""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
import requests

from bot.dream.runner import run_dream
from bot.dream.strategies import DreamInput, Proposal, ProposedCall
from bot.transcript import TranscriptStore
from tests.conftest import FORGE_ENV, StoreClock, git, run_cli
from tests.follow.test_follow import letta_post_commit_hook, pushes_logged
from tests.letta_conformance.letta import Letta
from tests.letta_conformance.test_letta_memory import AGENT, LAYOUTS, LettaMemory, forge_memory, integrate, letta_memory
from tests.memory_forge import FAST, REPO
from tests.waiting import wait_until

WAIT = 20.0


class EditsHuman:
    """A dream that rewrites the line Letta writes too: what a model might propose."""

    name = "edits-human"

    def __init__(self, path: str) -> None:
        self.path = path

    def propose(self, dream: DreamInput) -> Proposal:
        ids = tuple(m.message_id for m in dream.messages)
        call = {"command": "str_replace", "path": self.path, "old_str": "Name: Sam.",
                "new_str": "Name: Sam. Lives in Berlin."}
        return Proposal((ProposedCall(call, "where Sam lives", ids),), "Sam lives in Berlin.")


@pytest.fixture(params=LAYOUTS)
def connected(request: pytest.FixtureRequest, letta: Letta, localhub, tmp_path: Path,  # type: ignore[no-untyped-def]
              monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    """Letta's memory, connected as a person connects it: `/memory-repository set` in Letta
    (its post-commit hook and URL) and `memrepo repository set` for follow, on an empty forge."""
    for name in FORGE_ENV:
        monkeypatch.delenv(name, raising=False)
    made = letta_memory(letta, tmp_path / "letta", request.param)
    url, token = forge_memory(localhub)
    hook = made.root / ".git" / "hooks" / "post-commit"
    hook.write_text(letta_post_commit_hook())
    hook.chmod(0o755)
    git(made.root, "config", "--local", "letta.memoryRepository.url", url)
    code, out, err = run_cli(capsys, "repository", "set", url, "--repo", str(made.root))
    assert code == 0 and "connected to" in out, out + err
    return made, url, token


def letta_writes(made: LettaMemory, old: str, new: str) -> str:
    """Letta's tool edits, Letta's hooks commit (`edit` fails if the pre-commit hook refused)
    and push; the push's outcome is awaited, so the steps after it are in a known order."""
    pushes = len(pushes_logged(made.root))
    sha = made.edit(old, new)
    wait_until(lambda: len(pushes_logged(made.root)) == pushes + 1, WAIT, "Letta's post-commit push")
    return sha


def follow_once(made: LettaMemory, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code, out, err = run_cli(capsys, "follow", "--once", "--repo", str(made.root))
    assert err == "", err
    return code, out


def forge_main(url: str) -> str:
    return git(Path.cwd(), "ls-remote", url, "refs/heads/main").split("\t", 1)[0]


def tree(folder: Path, rev: str = "HEAD") -> str:
    return git(folder, "rev-parse", f"{rev}^{{tree}}").strip()


def on(folder: Path, sha: str, rev: str = "HEAD") -> bool:
    return git(folder, "rev-list", rev).split().count(sha) == 1


def dream(teammate: Path, home: Path, text: str, strategy: object | None = None) -> int:
    """The teammate's clone dreams over what the user said: the pull request's number."""
    git(teammate, "pull", "-q", "--ff-only")
    with TranscriptStore(home, fsync=False, clock=StoreClock()) as store:
        store.append(AGENT, "c1", "user", text)
        result = run_dream(teammate, AGENT, "c1", store=store, strategy=strategy, retry=FAST)  # type: ignore[arg-type]
    assert result.pr is not None, result.message
    return result.pr


def person_edits(localhub, token: str, path: str, old: str, new: str) -> str:  # type: ignore[no-untyped-def]
    """A person edits a file on the forge through the contents API: the commit's sha."""
    api = f"{localhub.api_url}/repos/{REPO}/contents/{path}"
    headers = {"Authorization": f"token {token}"}
    found = requests.get(api, headers=headers, timeout=10)
    found.raise_for_status()
    text = base64.b64decode(found.json()["content"]).decode()
    assert old in text
    body = {"message": f"Edit {path} on the forge", "sha": found.json()["sha"],
            "content": base64.b64encode(text.replace(old, new).encode()).decode()}
    done = requests.put(api, json=body, headers=headers, timeout=10)
    assert done.status_code in (200, 201), done.text
    return done.json()["commit"]["sha"]


def test_letta_and_memrepo_keep_one_memory_round_trip(  # type: ignore[no-untyped-def]
        connected, localhub, redis_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    made, url, token = connected
    home, teammate = tmp_path / "home", tmp_path / "teammate"
    letta_commits = git(made.root, "rev-list", "HEAD").split()

    # Letta writes; its hook pushes the first time (the forge is behind); follow has nothing left.
    letta_commits.append(letta_writes(made, "Name: Sam.", "Name: Sam. Likes tea."))
    assert pushes_logged(made.root) == ["exit=0"]
    assert follow_once(made, capsys) == (0, "")
    assert forge_main(url) == letta_commits[-1]

    # A teammate's clone dreams; the integrator merges the dream; follow brings it to Letta.
    git(tmp_path, "clone", "-q", url, str(teammate))
    number = dream(teammate, home, "I live in Berlin.")
    integrate(localhub, token, redis_url, tmp_path / "work", number)
    dreamed = requests.get(f"{localhub.api_url}/repos/{REPO}/pulls/{number}", timeout=10,
                           headers={"Authorization": f"token {token}"}).json()["head"]["sha"]
    code, out = follow_once(made, capsys)
    assert code == 0 and "fast-forwarded main" in out, out
    assert on(made.root, dreamed)
    assert any(p.startswith("conversations/c1/") for p in git(made.root, "ls-files").split())

    # Letta writes again on top of the dream; a person edits on the forge; follow again.
    letta_commits.append(letta_writes(made, "Likes tea.", "Likes green tea."))
    assert pushes_logged(made.root)[-1] == "exit=0"
    person = person_edits(localhub, token, made.core("persona"), "I am Ada.", "I am Ada, a helper.")
    code, out = follow_once(made, capsys)
    assert code == 0 and "fast-forwarded main" in out, out

    # Letta writes once more on everything the others wrote: its hook still accepts.
    letta_commits.append(letta_writes(made, "Likes green tea.", "Likes green tea. Lives in Berlin."))
    assert follow_once(made, capsys) == (0, "")
    git(teammate, "pull", "-q", "--ff-only")

    main = forge_main(url)
    assert git(made.root, "rev-parse", "HEAD").strip() == main == git(teammate, "rev-parse", "HEAD").strip()
    assert tree(made.root) == tree(teammate)
    assert git(made.root, "status", "--porcelain") == "" == git(teammate, "status", "--porcelain")
    for sha in (*letta_commits, dreamed, person):
        assert on(teammate, sha, main), sha
    assert "I am Ada, a helper." in (made.root / made.core("persona")).read_text()
    assert "Lives in Berlin." in (teammate / made.human).read_text()
    assert git(made.root, "for-each-ref", "refs/memrepo/backup").strip() == ""


def test_letta_and_a_dream_changing_one_line_lose_nothing(  # type: ignore[no-untyped-def]
        connected, localhub, redis_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    made, url, token = connected
    home, teammate = tmp_path / "home", tmp_path / "teammate"
    assert follow_once(made, capsys)[0] == 0
    git(tmp_path, "clone", "-q", url, str(teammate))

    number = dream(teammate, home, "I live in Berlin.", EditsHuman(made.human))
    integrate(localhub, token, redis_url, tmp_path / "work", number)
    merged = forge_main(url)
    clash = letta_writes(made, "Name: Sam.", "Name: Sam. Likes tea.")  # before Letta has the dream
    assert pushes_logged(made.root)[-1] != "exit=0"  # Letta's own push is refused: the forge moved

    code, out = follow_once(made, capsys)
    assert code == 1
    assert f"Commit {clash[:12]} \"Update human: Name: Sam. Likes tea.\" was NOT saved to main" in out, out
    refs = git(made.root, "for-each-ref", "--format=%(refname) %(objectname)", "refs/memrepo/backup").splitlines()
    [(ref, kept)] = [line.split() for line in refs]
    assert ref in out and on(made.root, clash, kept)  # the set-aside commit is kept, on the ref follow named
    assert git(made.root, "rev-parse", "HEAD").strip() == merged == forge_main(url)
    assert "Name: Sam. Lives in Berlin." in (made.root / made.human).read_text()

    # Letta goes on from the dream's line; its hook accepts; everyone agrees.
    again = letta_writes(made, "Lives in Berlin.", "Lives in Berlin. Likes tea.")
    assert pushes_logged(made.root)[-1] == "exit=0"
    assert follow_once(made, capsys) == (0, "")
    git(teammate, "pull", "-q", "--ff-only")
    assert git(teammate, "rev-parse", "HEAD").strip() == again == forge_main(url)
    assert tree(made.root) == tree(teammate)
