"""`memrepo follow`: what it decides, by tables; then the command with real parts: memory
folders written the way a harness writes them (files, then `git add` and `git commit`), a
teammate's clone, and localhub over HTTP as the forge. One pass (--once) pushes a commit, sets
aside one that conflicts and says so, and waits on a dirty tree; the long-running command (a
real process, stopped with a signal) polls the forge, waits while the harness has uncommitted
changes and says so once, shows in `repository status`, imports Letta Code's transcripts as they
grow, and keeps a folder with Letta Code's own post-commit hook on one main with the forge."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import requests

from bot.follow import decide, marker
from bot.follow.decide import State
from bot.memfs import sync
from bot.memfs.create import init_repository
from bot.memfs.store.repo import MemoryRepo
from tests.conftest import git, localhub_token, run_cli
from tests.waiting import wait_until

HUMAN = "system/human.md"
PERSONA = "system/persona.md"
WAIT = 20.0
POLL = "0.3"
TOKEN_ENVS = ("MEMREPO_FORGE_TOKEN", "GITHUB_TOKEN", "MEMREPO_AGENT_TOKEN")


# ----------------------------------------------------------------------------- the decisions
@pytest.mark.parametrize(("state", "head", "now", "polling", "expected"), [
    (State(), "a", 0.0, False, True),  # the first pass always runs
    (State(synced="a", announced=False, next_poll=10.0), "a", 5.0, True, False),  # nothing new, no poll due
    (State(synced="a", announced=False, next_poll=10.0), "b", 5.0, False, True),  # the harness committed
    (State(synced="a", announced=True, next_poll=10.0), "a", 5.0, False, True),  # a head event
    (State(synced="a", announced=False, next_poll=10.0), "a", 10.0, True, True),  # a poll is due
    (State(synced="a", announced=False, next_poll=10.0), "a", 10.0, False, False),  # the stream is up: no poll
    (State(synced="a", announced=True, retry_at=8.0), "b", 5.0, True, False),  # a failure's backoff runs
    (State(synced="a", announced=True, retry_at=8.0), "b", 8.0, True, True),
])
def test_when_a_pass_is_due(state: State, head: str, now: float, polling: bool, expected: bool) -> None:
    assert decide.due(state, head, now, polling) is expected


def test_a_good_pass_forgets_failures_and_a_bad_one_backs_off() -> None:
    state = decide.failed(decide.failed(State(synced="a"), 0.0, 1.0), 10.0, 1.0)
    assert (state.failures, state.retry_at, state.synced, state.announced) == (2, 12.0, "a", True)
    assert decide.failed(State(failures=20), 0.0, 1.0).retry_at == decide.RETRY.cap
    good = decide.succeeded(decide.announce(state), "b", 20.0, 30.0)
    assert good == State(synced="b", announced=False, next_poll=50.0, failures=0, retry_at=0.0)


@pytest.mark.parametrize(("branch", "dirty", "busy", "expected"), [
    ("main", [], False, None),
    ("main", ["system/human.md"], False, "waiting: /m has uncommitted or staged changes (system/human.md)"),
    ("main", [f"f{i}.md" for i in range(7)], False, "(f0.md, f1.md, f2.md, f3.md, f4.md ...)"),
    ("main", [], True, "waiting: a git command is at work in /m (.git/index.lock exists)"),
    ("main", ["x.md"], True, "a git command is at work"),  # the lock first: git is mid-commit
    ("reflection", [], False, "waiting: /m has reflection checked out, not main"),
    (None, [], False, "has a detached HEAD checked out"),
])
def test_why_a_pass_waits(branch: str | None, dirty: list[str], busy: bool, expected: str | None) -> None:
    reason = decide.wait_reason(Path("/m"), branch, dirty, busy)
    assert reason == expected if expected is None else expected in (reason or "")


@pytest.mark.parametrize(("said", "notice", "expected"), [
    (None, None, None), (None, "wait", "wait"), ("wait", "wait", None), ("wait", "other", "other"),
    ("wait", None, None),
])
def test_a_notice_is_said_once(said: str | None, notice: str | None, expected: str | None) -> None:
    assert decide.say_once(said, notice) == expected


@pytest.mark.parametrize(("made_at", "turn_known", "now", "expected"), [
    (1000.0, True, 1000.5, True),  # the turn is imported: open it now, quoting it
    (1000.0, False, 1000.5, False),  # the harness has not written the turn yet: wait
    (1000.0, False, 1000.0 + decide.TURN_GRACE - 1, False),
    (1000.0, False, 1000.0 + decide.TURN_GRACE, True),  # no longer: it opens, saying the turn cannot be known
])
def test_a_held_commits_pull_request_waits_a_while_for_its_turn(made_at: float, turn_known: bool, now: float,
                                                               expected: bool) -> None:
    assert decide.propose_held_now(made_at, turn_known, now) is expected


@pytest.mark.parametrize(("a", "b", "same"), [
    ("https://github.com/o/m.git", "https://x-access-token:t@github.com/o/m", True),
    ("https://GitHub.com/o/m/", "https://github.com/o/m.git", True),
    ("http://127.0.0.1:8000/o/m.git", "http://127.0.0.1:8001/o/m.git", False),
    ("https://github.com/o/m.git", "https://github.com/o/other.git", False),
    ("/srv/git/m.git", "/srv/git/m", True),
    ("git@github.com:o/m.git", "git@github.com:o/m", True),
])
def test_two_urls_of_one_repository(a: str, b: str, same: bool) -> None:
    assert decide.same_repository(a, b) is same


@pytest.mark.parametrize(("installed", "hook_url", "expected"), [
    (False, "https://github.com/o/m.git", None),  # no hook: nothing to say
    (True, None, None),  # Letta's hook with no URL pushes nowhere
    (True, "https://github.com/o/m", "pushes here too"),
    (True, "https://u:secret@github.com/o/other.git", "pushes to https://***@github.com/o/other.git, not to origin"),
])
def test_what_follow_says_of_lettas_hook(installed: bool, hook_url: str | None, expected: str | None) -> None:
    notice = decide.hook_notice(installed, hook_url, "https://x-access-token:tok@github.com/o/m.git")
    assert notice is None if expected is None else expected in (notice or "")
    assert "tok" not in (notice or "") and "secret" not in (notice or "")


@pytest.mark.parametrize(("seen", "alive", "expected"), [
    (100.0, True, "running"),
    (100.0 - marker.STALE_AFTER, True, "running"),
    (99.0 - marker.STALE_AFTER, True, "stale"),  # silent too long
    (100.0, False, "stale"),  # its process is gone
])
def test_whether_a_follower_runs(seen: float, alive: bool, expected: str) -> None:
    record = marker.Record(1, "h", "2026-03-14T09:00:00+00:00", seen, False, 30.0)
    assert marker.liveness(record, 100.0, alive) == expected
    assert marker.liveness(None, 100.0, alive) is None


# ----------------------------------------------------------------------------- real parts
def hub_memory(localhub, tmp_path: Path) -> tuple[str, MemoryRepo]:  # type: ignore[no-untyped-def]
    """alice's memory on localhub, made by `memrepo init` and connected: (its URL with her
    token, the folder)."""
    token = localhub_token(localhub, "alice")
    requests.post(f"{localhub.api_url}/user/repos", json={"name": "memory"},
                  headers={"Authorization": f"token {token}"}, timeout=10).raise_for_status()
    url = localhub.url.replace("http://", f"http://x-access-token:{token}@") + "/alice/memory.git"
    folder = init_repository(tmp_path / "folder", "a1", "Ada")
    sync.set_remote(folder, url)
    return url, folder


def harness_commit(folder: Path, path: str, text: str, message: str) -> str:
    """Write a file and commit it with git, as a harness does through its shell."""
    (folder / path).parent.mkdir(parents=True, exist_ok=True)
    (folder / path).write_text(text)
    git(folder, "add", path)
    git(folder, "commit", "-q", "-m", message)
    return git(folder, "rev-parse", "HEAD").strip()


def note(text: str) -> str:
    return f"---\ndescription: Notes.\n---\n{text}\n"


def forge_main(url: str) -> str:
    return git(Path.cwd(), "ls-remote", url, "refs/heads/main").split("\t", 1)[0]


def teammate_push(clone: Path, path: str, text: str, message: str) -> str:
    git(clone, "pull", "-q", "--ff-only")
    sha = harness_commit(clone, path, text, message)
    git(clone, "push", "-q", "origin", "main")
    return sha


def messages_on(folder: Path, rev: str = "HEAD") -> list[str]:
    return git(folder, "log", "--format=%s", rev).splitlines()


class Follow:
    """`memrepo follow ARGS` as a real process: its output is read on threads."""

    def __init__(self, *args: str) -> None:
        env = {k: v for k, v in os.environ.items() if k not in TOKEN_ENVS}
        self.process = subprocess.Popen([sys.executable, "-m", "bot.cli", "follow", *args], env=env,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.out: list[str] = []
        self.err: list[str] = []
        self._lines: queue.Queue[str] = queue.Queue()
        for stream, into in ((self.process.stdout, self.out), (self.process.stderr, self.err)):
            threading.Thread(target=self._read, args=(stream, into), daemon=True).start()

    def _read(self, stream, into: list[str]) -> None:  # type: ignore[no-untyped-def]
        for line in stream:
            into.append(line)

    def said(self, words: str) -> int:
        return sum(words in line for line in self.out)

    def output(self) -> str:
        return "stdout:\n" + "".join(self.out) + "stderr:\n" + "".join(self.err)

    def stop(self, signum: int = signal.SIGINT) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signum)
        try:
            return self.process.wait(timeout=30)
        finally:
            if self.process.poll() is None:
                self.process.kill()

    def __enter__(self) -> Follow:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop(signal.SIGKILL)


def converged(folder: Path, url: str) -> bool:
    head = git(folder, "rev-parse", "HEAD").strip()
    return head == forge_main(url) and git(folder, "status", "--porcelain", "--untracked-files=no") == ""


# ----------------------------------------------------------------------------- one pass
def test_once_pushes_the_harness_commit(localhub, tmp_path: Path,  # type: ignore[no-untyped-def]
                                        capsys: pytest.CaptureFixture[str]) -> None:
    url, folder = hub_memory(localhub, tmp_path)
    sha = harness_commit(folder.root, HUMAN, note("Likes tea."), "harness: tea")
    code, out, err = run_cli(capsys, "follow", "--once", "--repo", str(folder.root))
    assert code == 0 and err == "", err
    assert out.startswith("pushed 1 commit to http://***@") and "x-access-token" not in out
    assert forge_main(url) == sha == folder.head_sha()
    code, out, _ = run_cli(capsys, "follow", "--once", "--repo", str(folder.root))
    assert (code, out) == (0, "")  # nothing to do, nothing said


def test_once_sets_aside_a_conflicting_commit_and_says_so(localhub, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    url, folder = hub_memory(localhub, tmp_path)
    clone = tmp_path / "teammate"
    git(tmp_path, "clone", "-q", url, str(clone))
    teammate_push(clone, HUMAN, note("Likes tea."), "teammate: tea")
    clash = harness_commit(folder.root, HUMAN, note("Likes coffee."), "harness: coffee")
    harness_commit(folder.root, "reference/ada.md", note("I am Ada."), "harness: ada")

    code, out, _ = run_cli(capsys, "follow", "--once", "--repo", str(folder.root))
    assert code == 1
    assert f"Commit {clash[:12]} \"harness: coffee\" was NOT saved to main" in out and "refs/memrepo/backup/" in out
    assert converged(folder.root, url)
    assert messages_on(folder.root)[:2] == ["harness: ada", "teammate: tea"]
    assert "Likes tea." in (folder.root / HUMAN).read_text()
    code, out, _ = run_cli(capsys, "repository", "status", "--json", "--repo", str(folder.root))
    [aside] = json.loads(out)["set_aside"]
    assert aside["commit"] == clash and HUMAN in aside["reason"]


def test_once_waits_on_a_dirty_tree_and_touches_nothing(localhub, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    url, folder = hub_memory(localhub, tmp_path)
    clone = tmp_path / "teammate"
    git(tmp_path, "clone", "-q", url, str(clone))
    theirs = teammate_push(clone, PERSONA, note("From the forge."), "teammate: persona")
    harness_commit(folder.root, "reference/a.md", note("A."), "harness: a")
    head = folder.head_sha()
    (folder.root / HUMAN).write_text(note("Half written."))
    git(folder.root, "add", HUMAN)
    (folder.root / "reference/a.md").write_text(note("Being edited."))
    (folder.root / "reference/new.md").write_text(note("Not added yet."))  # untracked: uncommitted too
    (folder.root / ".git/info/exclude").write_text("*.swp\n")
    (folder.root / "system/.human.md.swp").write_text("an editor's")  # ignored: not the harness's work
    index = (folder.root / ".git/index").read_bytes()

    code, out, err = run_cli(capsys, "follow", "--once", "--repo", str(folder.root))
    assert code == 0 and err == ""
    assert out == (f"waiting: {folder.root} has uncommitted or staged changes (reference/a.md, reference/new.md, "
                   "system/human.md); nothing is touched until the harness commits or discards them\n")
    assert folder.head_sha() == head and forge_main(url) == theirs
    assert (folder.root / HUMAN).read_text() == note("Half written.")
    assert (folder.root / "reference/a.md").read_text() == note("Being edited.")
    assert (folder.root / ".git/index").read_bytes() == index


def test_follow_refuses_a_folder_with_no_forge_and_a_bad_poll(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    folder = init_repository(tmp_path / "folder", "a1", "Ada")
    code, _, err = run_cli(capsys, "follow", "--once", "--repo", str(folder.root))
    assert code == 1 and "is not connected to a forge" in err and "memrepo repository set URL" in err
    code, _, err = run_cli(capsys, "follow", "--poll", "0", "--repo", str(folder.root))
    assert code == 1 and "--poll must be a positive number" in err
    code, _, err = run_cli(capsys, "follow", "--events", "http://host/nope", "--repo", str(folder.root))
    assert code == 1 and "must look like" in err


# ----------------------------------------------------------------------------- following
def test_follow_polls_the_forge_and_pushes_as_the_harness_commits(localhub, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    url, folder = hub_memory(localhub, tmp_path)
    clone = tmp_path / "teammate"
    git(tmp_path, "clone", "-q", url, str(clone))
    with Follow("--repo", str(folder.root), "--poll", POLL) as follow:
        wait_until(lambda: follow.said("memrepo follow: following"), WAIT, follow.output)
        assert "a fetch every 0.3s; no event stream was given" in follow.out[0]

        theirs = teammate_push(clone, PERSONA, note("From the forge."), "teammate: persona")
        wait_until(lambda: folder.head_sha() == theirs, WAIT, follow.output)
        assert (folder.root / PERSONA).read_text() == note("From the forge.")
        # the follower says what it did once the pass is over, a moment after the ref moved
        wait_until(lambda: follow.said("fast-forwarded main by 1 commit"), WAIT, follow.output)

        mine = harness_commit(folder.root, HUMAN, note("Likes tea."), "harness: tea")
        wait_until(lambda: forge_main(url) == mine, WAIT, follow.output)

        code, out, _ = run_cli(capsys, "repository", "status", "--repo", str(folder.root))
        [row] = [line for line in out.splitlines() if line.startswith("follower:")]
        assert f"running (pid {follow.process.pid}," in row and "a fetch every 0.3s" in row
        data = json.loads(run_cli(capsys, "repository", "status", "--json", "--repo", str(folder.root))[1])
        assert data["follower"]["state"] == "running" and data["follower"]["pid"] == follow.process.pid
        code, _, err = run_cli(capsys, "follow", "--repo", str(folder.root))
        assert code == 1 and f"a follower already runs for {folder.root} (pid {follow.process.pid})" in err

        assert follow.stop(signal.SIGTERM) == 0, follow.output()
    assert follow.err == [] and follow.out[-1] == f"memrepo follow: stopped following {folder.root}\n"
    data = json.loads(run_cli(capsys, "repository", "status", "--json", "--repo", str(folder.root))[1])
    assert data["follower"] is None


def test_a_follower_that_died_shows_as_stale(localhub, tmp_path: Path,  # type: ignore[no-untyped-def]
                                             capsys: pytest.CaptureFixture[str]) -> None:
    _, folder = hub_memory(localhub, tmp_path)
    with Follow("--repo", str(folder.root), "--poll", POLL) as follow:
        wait_until(lambda: marker.follower(folder)[1] == "running", WAIT, follow.output)
        follow.stop(signal.SIGKILL)  # as a crash ends it: no cleaning up
    _, out, _ = run_cli(capsys, "repository", "status", "--repo", str(folder.root))
    [row] = [line for line in out.splitlines() if line.startswith("follower:")]
    assert f"stale: pid {follow.process.pid} is gone or silent since" in row
    with Follow("--repo", str(folder.root), "--poll", POLL, "--once") as again:  # a new one may start
        assert again.process.wait(timeout=WAIT) == 0, again.output()


def test_follow_waits_while_the_harness_has_uncommitted_changes(localhub, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    url, folder = hub_memory(localhub, tmp_path)
    clone = tmp_path / "teammate"
    git(tmp_path, "clone", "-q", url, str(clone))
    with Follow("--repo", str(folder.root), "--poll", POLL) as follow:
        wait_until(lambda: follow.said("memrepo follow: following"), WAIT, follow.output)
        head = folder.head_sha()
        (folder.root / HUMAN).write_text(note("Being written."))
        theirs = teammate_push(clone, PERSONA, note("From the forge."), "teammate: persona")
        wait_until(lambda: follow.said("waiting:"), WAIT, follow.output)
        time.sleep(10 * float(POLL))  # several polls come and go: the wait is said once, nothing moves
        assert follow.said("waiting:") == 1
        assert folder.head_sha() == head and (folder.root / HUMAN).read_text() == note("Being written.")
        assert forge_main(url) == theirs

        git(folder.root, "commit", "-q", "-am", "harness: written")
        wait_until(lambda: converged(folder.root, url), WAIT, follow.output)
        assert messages_on(folder.root)[:2] == ["harness: written", "teammate: persona"]
        # the follower says so once its pass returns, a moment after the push that converged them
        wait_until(lambda: follow.said("replayed 1 local commit onto the remote's newer main"), WAIT, follow.output)
        assert follow.stop() == 0, follow.output()


# ----------------------------------------------------------------------------- Letta Code's transcripts
def test_follow_imports_lettas_transcripts_as_they_grow(localhub, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    from bot.transcript import TranscriptStore
    from tests.letta_writer import AGENT, CONVERSATION, Turn, assistant, user, write

    _, folder = hub_memory(localhub, tmp_path)
    root, home = tmp_path / "letta-transcripts", tmp_path / "home"
    write(root, [Turn([user("I moved to Lyon.", "o1", "message-u1"),
                       assistant("Noted: Lyon.", "message-a1", after_reasoning=False)])])
    args = ("--repo", str(folder.root), "--transcripts", str(root), "--home", str(home))
    code, out, _ = run_cli(capsys, "follow", "--once", *args)
    assert code == 0 and out.startswith(f"imported 2 messages from 1 Letta conversation in {root}")
    assert run_cli(capsys, "follow", "--once", *args)[:2] == (0, "")  # nothing new: nothing said

    with Follow(*args, "--poll", POLL) as follow:
        wait_until(lambda: follow.said("memrepo follow: following"), WAIT, follow.output)
        write(root, [Turn([user("My sister visits in May.", "o2", "message-u2")], at="2026-03-14T09:05:00.000Z")])
        wait_until(lambda: follow.said("imported 1 message from 1 Letta conversation"), WAIT, follow.output)
        assert follow.stop() == 0, follow.output()
    with TranscriptStore(home) as store:
        assert [m.message_id for m in store.read(AGENT, CONVERSATION)] == ["message-u1", "message-a1", "message-u2"]

    code, out, _ = run_cli(capsys, "follow", "--once", "--repo", str(folder.root), "--transcripts",
                           str(tmp_path / "nowhere"), "--home", str(home))
    assert code == 1 and out.startswith("transcripts not imported (") and "nowhere does not exist" in out


# ----------------------------------------------------------------------------- Letta Code's hook
def letta_post_commit_hook() -> str:
    """Letta Code's post-commit hook, as its `installPostCommitHook` writes it: the script's
    template literal, taken from the pinned bundle and evaluated by node."""
    from tests.letta_conformance.letta import package_dir

    bundle = (package_dir() / "letta.js").read_text(encoding="utf-8")
    start = bundle.index("POST_COMMIT_HOOK_SCRIPT = `") + len("POST_COMMIT_HOOK_SCRIPT = ")
    literal = bundle[start:bundle.index("`", start + 1) + 1]
    done = subprocess.run(["node", "-e", f"process.stdout.write({literal})"], capture_output=True, text=True,
                          check=True)
    assert "memory-repository-push.log" in done.stdout and "letta.memoryRepository.url" in done.stdout
    return done.stdout


def pushes_logged(folder: Path) -> list[str]:
    """The exit statuses Letta's hook logged, one per push it ran."""
    log = folder / ".git/memory-repository-push.log"
    return [line for line in log.read_text().splitlines() if line.startswith("exit=")] if log.exists() else []


def test_with_lettas_post_commit_hook_the_folder_and_the_forge_converge(localhub, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    url, folder = hub_memory(localhub, tmp_path)
    hook = folder.root / ".git/hooks/post-commit"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text(letta_post_commit_hook())
    hook.chmod(0o755)
    git(folder.root, "config", "--local", "letta.memoryRepository.url", url)  # what `/memory-repository set` does
    clone = tmp_path / "teammate"
    git(tmp_path, "clone", "-q", url, str(clone))

    # Without a follower: the hook pushes, until the forge's main moves; then its push is refused.
    first = harness_commit(folder.root, HUMAN, note("Likes tea."), "harness: tea")
    wait_until(lambda: pushes_logged(folder.root) == ["exit=0"], WAIT, "the hook's first push")
    assert forge_main(url) == first
    teammate_push(clone, PERSONA, note("From the forge."), "teammate: persona")
    harness_commit(folder.root, "reference/a.md", note("A."), "harness: a")
    wait_until(lambda: len(pushes_logged(folder.root)) == 2, WAIT, "the hook's second push")
    assert pushes_logged(folder.root)[1] != "exit=0"
    assert "harness: a" not in messages_on(clone, "origin/main")

    # A follower repairs it, and keeps both sides on one main while both push.
    with Follow("--repo", str(folder.root), "--poll", POLL) as follow:
        wait_until(lambda: converged(folder.root, url), WAIT, follow.output)
        assert follow.said("Letta Code's post-commit hook pushes here too")
        teammate_push(clone, "reference/b.md", note("B."), "teammate: b")
        harness_commit(folder.root, "reference/c.md", note("C."), "harness: c")
        wait_until(lambda: converged(folder.root, url) and "teammate: b" in messages_on(folder.root), WAIT,
                   follow.output)
        assert follow.stop() == 0, follow.output()
    assert sorted(messages_on(folder.root)[:5]) == ["harness: a", "harness: c", "harness: tea", "teammate: b",
                                                    "teammate: persona"]
    assert sync.backups(folder) == []
