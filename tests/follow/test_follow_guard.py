"""memrepo's pre-push guard (bot/follow/guard.py, run by bot/agent/push_guard.py): a push of
`main` from a followed folder that would add a commit the policy holds for review is refused
with one line, whoever pushes (plain `git push` as Letta Code's post-commit hook runs it, or
memrepo's own `repository sync`); what the policy allows goes through, `memrepo follow`'s own
push included; a user's pre-push hook keeps running after it. The input's reading as tables;
then real git folders, the hook as git runs it, and localhub over HTTP."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import requests

from bot.follow import guard
from bot.follow.guard import Update
from bot.memfs.create import init_repository
from bot.memfs.store.repo import MemoryRepo
from tests.conftest import git, localhub_token, run_cli
from tests.follow.test_follow import HUMAN, PERSONA, forge_main, harness_commit, note

A, B, Z = "a" * 40, "b" * 40, "0" * 40


# ----------------------------------------------------------------------------- git's input, read
@pytest.mark.parametrize(("text", "expected"), [
    ("", []),
    (f"refs/heads/main {A} refs/heads/main {B}\n", [Update("refs/heads/main", A, "refs/heads/main", B)]),
    (f"HEAD {A} refs/heads/main {B}", [Update("HEAD", A, "refs/heads/main", B)]),  # `git push url HEAD:main`
    (f"refs/heads/main {A} refs/heads/main\n\nnot a line at all\n", []),
    (f"refs/heads/x {A} refs/heads/x {Z}\nrefs/heads/main {A} refs/heads/main {B}\n",
     [Update("refs/heads/x", A, "refs/heads/x", Z), Update("refs/heads/main", A, "refs/heads/main", B)]),
])
def test_the_hook_input_is_read_line_by_line(text: str, expected: list[Update]) -> None:
    assert guard.updates(text) == expected


@pytest.mark.parametrize(("update", "judged"), [
    (Update("refs/heads/main", A, "refs/heads/main", B), True),  # main gains commits: judged
    (Update("refs/heads/x", A, "refs/heads/main", B), True),  # whatever the local branch is called
    (Update("refs/heads/main", A, "refs/heads/memrepo/edit/a1/1", B), False),  # a pull request's branch
    (Update("refs/heads/main", A, "refs/heads/main", Z), False),  # the first push makes the forge's main
    (Update("(delete)", Z, "refs/heads/main", B), False),  # a deletion adds no commit
    (Update("refs/heads/main", A, "refs/heads/main", A), False),  # nothing new
    (Update("refs/heads/main", "0" * 64, "refs/heads/main", B), False),  # sha-256 zeros
])
def test_only_pushes_that_add_commits_to_main_are_judged(update: Update, judged: bool) -> None:
    assert (guard.to_main([update]) == [update]) is judged


# ----------------------------------------------------------------------------- real parts
def connected(localhub, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[str, MemoryRepo]:  # type: ignore[no-untyped-def]
    """alice's memory on localhub, made by `memrepo init` and connected with `repository set`."""
    token = localhub_token(localhub, "alice")
    requests.post(f"{localhub.api_url}/user/repos", json={"name": "memory"},
                  headers={"Authorization": f"token {token}"}, timeout=10).raise_for_status()
    url = localhub.url.replace("http://", f"http://x-access-token:{token}@") + "/alice/memory.git"
    code, out, err = run_cli(capsys, "init", str(tmp_path / "folder"), "--agent-id", "a1", "--agent-name", "Ada")
    assert code == 0, err
    root = tmp_path / "folder"
    code, out, err = run_cli(capsys, "repository", "set", url, "--repo", str(root))
    assert code == 0 and "pre-push guard installed" in out, out + err
    return url, MemoryRepo.open(root)


def harness_push(folder: Path, url: str) -> subprocess.CompletedProcess[str]:
    """A push of main as Letta Code's post-commit hook runs it: plain git, to the URL."""
    return subprocess.run(["git", "push", "--quiet", url, "main:main"], cwd=folder, capture_output=True, text=True)


def test_a_harness_push_of_a_held_commit_is_refused_with_one_line(  # type: ignore[no-untyped-def]
        localhub, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url, folder = connected(localhub, tmp_path, capsys)
    before = forge_main(url)
    tea = harness_commit(folder.root, HUMAN, note("Likes tea."), "harness: tea")
    held = harness_commit(folder.root, PERSONA, note("I am Ada, and I obey no one."), "harness: persona")

    done = harness_push(folder.root, url)
    assert done.returncode == 1
    [line] = [ln for ln in done.stderr.splitlines() if ln.startswith("memrepo:")]
    assert line == (f"memrepo: commit {held[:12]} \"harness: persona\" waits for review (it touches protected "
                    "memory: system/persona.md), so this push to main is refused; memrepo follow takes it off main "
                    "and opens its pull request")
    assert "Traceback" not in done.stderr
    assert forge_main(url) == before  # not even the allowed commit before it: the push is one

    # An allowed commit alone goes through the guard.
    git(folder.root, "reset", "-q", "--hard", tea)
    assert harness_push(folder.root, url).returncode == 0
    assert forge_main(url) == tea

    # A commit naming outside content, and a change to the rules, are held as the tool's calls are.
    web = harness_commit(folder.root, "reference/web.md", note("From a page."),
                         "harness: page\n\nSource: external:web:https://x.example")
    done = harness_push(folder.root, url)
    assert done.returncode == 1 and f"{web[:12]} \"harness: page\" waits for review" in done.stderr
    assert "outside the conversation (external:web:https://x.example)" in done.stderr
    git(folder.root, "reset", "-q", "--hard", tea)
    harness_commit(folder.root, ".memrepo/config.yml", "merge: auto\n", "harness: loosen")
    done = harness_push(folder.root, url)
    assert done.returncode == 1 and "the rules memory is judged by (.memrepo/config.yml)" in done.stderr
    assert forge_main(url) == tea


def test_follow_passes_its_own_guard_and_memrepos_sync_meets_it(  # type: ignore[no-untyped-def]
        localhub, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url, folder = connected(localhub, tmp_path, capsys)
    before = forge_main(url)
    harness_commit(folder.root, PERSONA, note("I am Ada, and I obey no one."), "harness: persona")
    harness_commit(folder.root, "reference/b.md", note("B."), "harness: b")
    assert harness_push(folder.root, url).returncode == 1

    # `repository sync` pushes through git as well: the same refusal, as one line.
    code, out, err = run_cli(capsys, "repository", "sync", "--repo", str(folder.root))
    assert code == 1 and err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("memrepo: not synced (the remote refused the push: commit ") and "waits for review" in err
    assert forge_main(url) == before

    # follow holds the persona, replays b without it and pushes that through the guard.
    code, out, err = run_cli(capsys, "follow", "--once", "--repo", str(folder.root))
    assert (code, err) == (0, ""), out + err
    assert "held back from main, for review" in out and "pushed 1 commit" in out
    main = forge_main(url)
    assert main != before and git(folder.root, "log", "-1", "--format=%s", main).strip() == "harness: b"
    assert git(folder.root, "rev-parse", "HEAD").strip() == main
    assert harness_push(folder.root, url).returncode == 0  # nothing held is left on main


def user_hook(folder: Path, exit_code: int) -> Path:
    """A pre-push hook of the user's own: it records what git gave it, and exits `exit_code`."""
    hook = folder / ".git/hooks/pre-push"
    hook.parent.mkdir(parents=True, exist_ok=True)
    hook.write_text(f"#!/bin/sh\ncat > \"$(dirname \"$0\")/../user-hook-saw\"\necho \"$1\" >> "
                    f"\"$(dirname \"$0\")/../user-hook-saw\"\nexit {exit_code}\n")
    hook.chmod(0o755)
    return hook


def test_a_users_pre_push_hook_is_chained_after_the_guard(  # type: ignore[no-untyped-def]
        localhub, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url, folder = connected(localhub, tmp_path, capsys)
    hook = folder.root / ".git/hooks/pre-push"
    hook.unlink()
    mine = user_hook(folder.root, 0).read_text()

    code, out, err = run_cli(capsys, "follow", "--once", "--repo", str(folder.root))
    assert code == 0 and err == ""
    chained = folder.root / ".git/hooks/pre-push.chained"
    assert f"your pre-push hook is now {chained}; it runs after memrepo's pre-push guard ({hook})" in out
    assert chained.read_text() == mine and guard.MARK in hook.read_text()

    tea = harness_commit(folder.root, HUMAN, note("Likes tea."), "harness: tea")
    assert harness_push(folder.root, url).returncode == 0 and forge_main(url) == tea
    saw = (folder.root / ".git/user-hook-saw").read_text()
    assert f"refs/heads/main {tea} refs/heads/main" in saw and saw.rstrip().endswith(url)  # its input and its URL

    # Installing again changes nothing and says nothing; the user's hook can still refuse a push.
    code, out, _ = run_cli(capsys, "follow", "--once", "--repo", str(folder.root))
    assert code == 0 and "pre-push" not in out and chained.read_text() == mine
    user_hook(folder.root, 0)  # the user writes a new pre-push hook while one is chained
    (folder.root / ".git/hooks/pre-push.chained").write_text("#!/bin/sh\nexit 1\n")
    code, out, err = run_cli(capsys, "follow", "--once", "--repo", str(folder.root))
    assert code == 1 and err.count("\n") == 1 and f"{chained} is taken" in err
    assert guard.MARK not in hook.read_text()  # nothing was moved or overwritten


def test_a_guard_whose_interpreter_is_gone_refuses_with_one_line(tmp_path: Path) -> None:
    folder = init_repository(tmp_path / "folder", "a1", "Ada")
    remote = tmp_path / "r.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    git(folder.root, "push", "-q", str(remote), "main")
    harness_commit(folder.root, HUMAN, note("Likes tea."), "harness: tea")
    gone = tmp_path / "gone" / "python3"
    guard.install(folder, str(gone))
    done = subprocess.run(["git", "push", "-q", str(remote), "main"], cwd=folder.root, capture_output=True, text=True)
    assert done.returncode == 1
    assert f"memrepo: the pre-push guard's interpreter {gone} is gone, so the push is refused" in done.stderr
    assert guard.install(folder, sys.executable).written  # rewritten with a live interpreter: the push goes
    assert subprocess.run(["git", "push", "-q", str(remote), "main"], cwd=folder.root).returncode == 0
