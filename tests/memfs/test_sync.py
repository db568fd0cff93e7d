"""Sync against real bare remotes under tmp_path: round trips, replay, conflicts, outages,
connecting a remote, and redaction of credentials. No mocks."""

from __future__ import annotations

import http.server
import subprocess
import threading
from pathlib import Path

import pygit2
import pytest
import requests

from bot import identity
from bot.errors import MemrepoError
from bot.memfs import sync
from bot.memfs.store.repo import MemoryRepo
from bot.memfs.sync import transport
from bot.memfs.sync.push import last_sync
from tests.conftest import localhub_token

HUMAN = "---\ndescription: what I know about the person\n---\nName: Sam\n"
PERSONA = "---\ndescription: who I am\n---\nI am a helpful agent.\n"


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True)
    return done.stdout.strip()


def new_memory(path: Path) -> MemoryRepo:
    """A freshly initialised memory repository: one commit, like `memrepo init` makes (the
    folder's name goes in the message, so two of them never share their first commit)."""
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    (path / "system").mkdir()
    (path / "system/persona.md").write_text(PERSONA)
    (path / "system/human.md").write_text(HUMAN)
    (path / ".memrepo").mkdir()
    (path / ".memrepo/config.yml").write_text("")
    git(path, "add", "-A")
    git(path, "-c", "user.name=memrepo init", "-c", "user.email=init@example.com",
        "commit", "-q", "-m", f"Initial memory ({path.name})")
    return MemoryRepo.open(path)


def new_bare(path: Path) -> Path:
    """A bare remote that refuses any forced update, so a forced push would fail the test."""
    git(path.parent, "init", "-q", "--bare", "-b", "main", str(path))
    git(path, "config", "receive.denyNonFastForwards", "true")
    git(path, "config", "receive.denyDeletes", "true")
    return path


def clone(remote: Path, path: Path) -> MemoryRepo:
    git(remote.parent, "clone", "-q", str(remote), str(path))
    return MemoryRepo.open(path)


def edit(repo: MemoryRepo, path: str, change, agent_id: str = "a1", message: str | None = None) -> str:
    """Commit one change of one file the way the memory tool does (without validation)."""
    head = repo.head_sha()
    old = repo.read(path, head)
    new = change(old.decode() if old is not None else None)
    return repo.commit({path: None if new is None else new.encode()}, message or f"edit {path}",
                       identity.agent(agent_id), parent=head)


def append(line: str):
    return lambda text: text + line + "\n"


def remote_main(remote: Path) -> str:
    return git(remote, "rev-parse", "refs/heads/main")


def remote_file(remote: Path, path: str) -> str:
    return git(remote, "show", f"main:{path}") + "\n"


def is_ancestor(remote: Path, old: str, new: str) -> bool:
    return subprocess.run(["git", "merge-base", "--is-ancestor", old, new], cwd=remote).returncode == 0


@pytest.fixture
def pair(tmp_path: Path) -> tuple[Path, MemoryRepo, MemoryRepo]:
    """A bare remote and two clones of it (A connected it, B cloned it)."""
    remote = new_bare(tmp_path / "remote.git")
    a = new_memory(tmp_path / "a")
    sync.set_remote(a, str(remote))
    b = clone(remote, tmp_path / "b")
    return remote, a, b


# ----------------------------------------------------------------- push / sync
def test_push_without_remote_is_not_an_error(tmp_path: Path) -> None:
    repo = new_memory(tmp_path / "m")
    result = sync.push(repo)
    assert result.pushed is False
    assert result.reason == sync.NO_REMOTE == "no remote"


def test_round_trip_between_two_clones(pair) -> None:
    remote, a, b = pair
    sha = edit(a, "system/human.md", append("Likes tea."), agent_id="a1")
    result = sync.push(a)
    assert result.pushed and result.sent == 1 and result.head == sha
    assert remote_main(remote) == sha
    assert (last_sync(a) or "").endswith("Z")

    result = sync.sync(b)
    assert result.pushed and result.pulled == 1 and result.head == sha
    assert b.head_sha() == sha
    assert "Likes tea." in (b.root / "system/human.md").read_text()
    assert b.dirty_paths() == []

    sha2 = edit(b, "reference/notes.md", lambda _: "---\ndescription: notes\n---\nhi\n", agent_id="b1")
    assert sync.push(b).pushed
    assert sync.sync(a).head == sha2
    assert (a.root / "reference/notes.md").read_text().endswith("hi\n")
    assert sync.sync(a).pushed  # nothing to do is still a success
    assert sync.sync(a).summary == f"in sync with {remote} at {a.head_sha()[:12]}"


def test_non_fast_forward_is_replayed_and_both_appends_survive(pair) -> None:
    remote, a, b = pair
    edit(a, "system/human.md", append("From A."), agent_id="agent-a")
    assert sync.push(a).pushed
    a_tip = remote_main(remote)

    b_local = edit(b, "system/human.md", append("From B."), agent_id="agent-b", message="B learns")
    b_info = b.commit_info(b_local)
    result = sync.push(b)
    assert result.pushed and result.replayed == 1 and result.attempts == 2

    new_tip = remote_main(remote)
    assert new_tip != b_local  # replayed: a new commit on top of A's
    assert is_ancestor(remote, a_tip, new_tip)  # nothing forced
    text = remote_file(remote, "system/human.md")
    assert text.count("From A.") == 1 and text.count("From B.") == 1
    assert text.index("From A.") < text.index("From B.")
    info = b.commit_info(new_tip)
    assert (info.author_name, info.author_email, info.time, info.message) == (
        b_info.author_name, b_info.author_email, b_info.time, b_info.message)
    assert info.parents == (a_tip,)
    assert b.head_sha() == new_tip
    assert b.dirty_paths() == []
    assert (b.root / "system/human.md").read_text() == text

    assert sync.sync(a).head == new_tip
    log = git(a.root, "log", "--format=%ae %s")
    assert log.splitlines()[:2] == [
        "agent-b@agents.memrepo B learns", "agent-a@agents.memrepo edit system/human.md"]


def test_several_local_commits_replay_in_order(pair) -> None:
    remote, a, b = pair
    edit(a, "system/persona.md", append("A's persona line."))
    assert sync.push(a).pushed
    for i in range(3):
        edit(b, "system/human.md", append(f"B fact {i}."), agent_id="b1", message=f"fact {i}")
    edit(b, "reference/new.md", lambda _: "---\ndescription: new\n---\n", agent_id="b1", message="new file")
    result = sync.push(b)
    assert result.pushed and result.replayed == 4
    subjects = git(remote, "log", "--format=%s", "main").splitlines()
    assert subjects[:5] == ["new file", "fact 2", "fact 1", "fact 0", "edit system/persona.md"]
    assert "A's persona line." in remote_file(remote, "system/persona.md")


def test_sync_replays_when_both_moved(pair) -> None:
    remote, a, b = pair
    edit(a, "system/human.md", append("A."))
    assert sync.push(a).pushed
    edit(b, "system/persona.md", append("B."))
    result = sync.sync(b)
    assert result.pushed and result.replayed == 1 and result.pulled == 1
    assert "replayed 1 local commit " in result.summary
    assert remote_main(remote) == b.head_sha()


def test_a_conflict_sets_aside_only_the_commit_that_conflicts(pair) -> None:
    """Eight writers once lost queued edits that conflicted with nothing: one conflicting
    commit set every queued commit aside. Each commit is replayed on its own now."""
    remote, a, b = pair
    edit(a, "system/human.md", lambda t: t.replace("Name: Sam", "Name: Samantha"))
    assert sync.push(a).pushed

    edit(b, "system/persona.md", append("Unrelated, before."), agent_id="b1")
    b_local = edit(b, "system/human.md", lambda t: t.replace("Name: Sam", "Name: Samuel"), agent_id="b1",
                   message="Call the user Samuel")
    edit(b, "reference/notes.md", lambda _: "---\ndescription: Notes\n---\nUnrelated, after.\n",
                 agent_id="b1")
    result = sync.push(b)
    assert result.pushed and result.replayed == 2
    [kept] = result.set_aside
    assert kept.commit == b_local and kept.message == "Call the user Samuel"
    assert kept.ref.startswith("refs/memrepo/backup/") and kept.ref.endswith(b_local[:8])
    assert "system/human.md" in kept.reason
    assert str(b.git.references[kept.ref].target) == b_local  # the commit itself, for cherry-pick
    assert b_local[:12] in result.summary and kept.ref in result.summary and "NOT saved" in result.summary
    assert "\n" not in result.summary
    main = remote_main(remote)
    assert b.head_sha() == main
    messages_on_main = git(remote, "log", "--format=%s", main).splitlines()
    assert "Call the user Samuel" not in messages_on_main
    assert remote_file(remote, "system/persona.md").endswith("Unrelated, before.\n")
    assert "Unrelated, after." in remote_file(remote, "reference/notes.md")
    assert "Samantha" in remote_file(remote, "system/human.md")
    assert b.dirty_paths() == []
    assert sync.backups(b) == [kept.ref]
    assert sync.status(b).set_aside == [kept]


def test_delete_against_modify_is_a_conflict(pair) -> None:
    remote, a, b = pair
    edit(a, "system/human.md", append("more"))
    assert sync.push(a).pushed
    edit(b, "system/human.md", lambda _: None)
    result = sync.push(b)
    assert [e.reason for e in result.set_aside] == ["system/human.md was deleted on one side and changed on the other"]
    assert b.head_sha() == remote_main(remote)


def test_replay_that_does_not_validate_is_set_aside(pair) -> None:
    remote, a, b = pair
    # A person marks the file read_only on the remote; the agent's append merges cleanly
    # as text but may not change a read_only file.
    edit(a, "system/human.md", lambda t: t.replace("description:", "read_only: true\ndescription:"))
    assert sync.push(a).pushed
    edit(b, "system/human.md", append("Agent note."))
    [kept] = sync.push(b).set_aside
    assert "does not validate once merged" in kept.reason
    assert b.head_sha() == remote_main(remote)


def test_unreachable_remote_queues_the_commit(pair, tmp_path: Path) -> None:
    remote, a, _ = pair
    sha = edit(a, "system/human.md", append("Queued."))
    away = tmp_path / "away.git"
    remote.rename(away)
    result = sync.push(a)
    assert result.pushed is False
    assert result.reason.startswith("remote unreachable")
    assert "\n" not in result.reason
    assert a.head_sha() == sha
    with pytest.raises(MemrepoError, match="not connected"):
        sync.sync(new_memory(tmp_path / "lonely"))
    assert sync.sync(a).pushed is False

    away.rename(remote)
    result = sync.sync(a)
    assert result.pushed and result.sent == 1
    assert remote_main(remote) == sha


def test_sync_refuses_uncommitted_changes(pair) -> None:
    _, a, _ = pair
    (a.root / "system/human.md").write_text(HUMAN + "typed by hand\n")
    with pytest.raises(MemrepoError, match="uncommitted changes"):
        sync.sync(a)


def test_push_keeps_commit_local_when_replay_would_touch_dirty_tree(pair) -> None:
    _, a, b = pair
    edit(a, "system/human.md", append("A."))
    assert sync.push(a).pushed
    sha = edit(b, "system/persona.md", append("B."))
    (b.root / "system/human.md").write_text(HUMAN + "typed by hand\n")
    result = sync.push(b)
    assert result.pushed is False and "uncommitted changes" in result.reason
    assert b.head_sha() == sha
    assert (b.root / "system/human.md").read_text().endswith("typed by hand\n")


def test_status_counts_and_fetch(pair) -> None:
    remote, a, b = pair
    st = sync.status(b)
    assert st.url == str(remote) and st.ahead == 0 and st.behind == 0 and st.branch == "main"
    edit(a, "system/human.md", append("A."))
    sync.push(a)
    edit(b, "system/persona.md", append("B1."))
    edit(b, "system/persona.md", append("B2."))
    assert (sync.status(b).ahead, sync.status(b).behind) == (2, 0)
    st = sync.status(b, fetch=True)
    assert st.fetched and (st.ahead, st.behind) == (2, 1)
    assert st.remote_head == remote_main(remote)


# ----------------------------------------------------------------- set / unset
def test_set_on_empty_remote_pushes_and_sets_upstream(tmp_path: Path) -> None:
    remote = new_bare(tmp_path / "r.git")
    repo = new_memory(tmp_path / "m")
    edit(repo, "system/human.md", append("x"))
    said = sync.set_remote(repo, str(remote))
    assert said.startswith("connected to") and "(2 commits)" in said
    assert remote_main(remote) == repo.head_sha()
    assert repo.get_config("branch.main.remote") == "origin"
    assert repo.get_config("branch.main.merge") == "refs/heads/main"
    again = sync.set_remote(repo, str(remote))
    assert "already in sync" in again


def test_set_adopts_remote_history_into_fresh_clone(tmp_path: Path) -> None:
    remote = new_bare(tmp_path / "r.git")
    first = new_memory(tmp_path / "first")
    edit(first, "system/human.md", append("Remote knowledge."))
    sync.set_remote(first, str(remote))
    fresh = new_memory(tmp_path / "fresh")
    fresh_initial = fresh.head_sha()
    said = sync.set_remote(fresh, str(remote))
    assert "took the remote's main" in said
    assert fresh.head_sha() == remote_main(remote)
    assert "Remote knowledge." in (fresh.root / "system/human.md").read_text()
    [backup] = sync.backups(fresh)
    assert backup in said
    assert str(fresh.git.references[backup].target) == fresh_initial
    assert fresh.dirty_paths() == []


def test_set_refuses_diverged_histories(tmp_path: Path) -> None:
    remote = new_bare(tmp_path / "r.git")
    first = new_memory(tmp_path / "first")
    sync.set_remote(first, str(remote))
    before_remote = remote_main(remote)
    other = new_memory(tmp_path / "other")
    local = edit(other, "system/human.md", append("Local work."))
    with pytest.raises(MemrepoError, match="no commit in common") as caught:
        sync.set_remote(other, str(remote))
    assert "nothing was changed" in str(caught.value)
    assert sync.remote_url(other) is None
    assert other.resolve(sync.TRACKING_REF) is None
    assert other.head_sha() == local
    assert remote_main(remote) == before_remote
    assert sync.backups(other) == []


@pytest.mark.parametrize(("fast_forward", "related", "local_commits", "how"), [
    (True, True, 1, "fast-forward"),
    (True, True, 5, "fast-forward"),
    (False, True, 2, "join"),  # both moved on from a common commit
    (False, False, 1, "adopt"),  # a fresh clone's initial commit gives way
    (False, False, 2, "unrelated"),  # work of its own on another history: refused
])
def test_how_a_clone_takes_a_remote_main_it_lacks(fast_forward: bool, related: bool, local_commits: int,
                                                  how: str) -> None:
    from bot.memfs.sync.connect import how_to_take

    assert how_to_take(fast_forward, related, local_commits) == how


def test_set_fast_forwards_and_pushes_ahead(pair) -> None:
    remote, a, b = pair
    assert sync.unset_remote(b).startswith("disconnected from")
    assert sync.unset_remote(b) == "no remote was connected; nothing to do"
    edit(a, "system/human.md", append("A1."))
    edit(a, "system/human.md", append("A2."))
    sync.push(a)
    said = sync.set_remote(b, str(remote))
    assert "fast-forwarded main by 2 commits" in said
    assert b.head_sha() == remote_main(remote)
    sync.unset_remote(b)
    edit(b, "system/persona.md", append("B."))
    said = sync.set_remote(b, str(remote))
    assert "pushed 1 local commit;" in said
    assert remote_main(remote) == b.head_sha()


def test_set_unreachable_leaves_nothing_configured(tmp_path: Path) -> None:
    repo = new_memory(tmp_path / "m")
    with pytest.raises(MemrepoError, match="cannot reach") as caught:
        sync.set_remote(repo, str(tmp_path / "missing.git"))
    assert "nothing was changed" in str(caught.value)
    assert sync.remote_url(repo) is None
    assert repo.get_config("branch.main.remote") is None


def test_set_unreachable_keeps_the_previous_remote(pair, tmp_path: Path) -> None:
    remote, a, _ = pair
    tracking = a.resolve(sync.TRACKING_REF)
    with pytest.raises(MemrepoError):
        sync.set_remote(a, str(tmp_path / "missing.git"))
    assert sync.remote_url(a) == str(remote)
    assert a.resolve(sync.TRACKING_REF) == tracking


@pytest.mark.parametrize("url", ["", "  ", "a b", "x\0y", "-oProxyCommand=x", "tab\there"])
def test_set_rejects_bad_urls(tmp_path: Path, url: str) -> None:
    repo = new_memory(tmp_path / "m")
    with pytest.raises(MemrepoError, match="remote URL"):
        sync.set_remote(repo, url)
    assert sync.remote_url(repo) is None


def test_set_refuses_remote_without_main(tmp_path: Path) -> None:
    remote = new_bare(tmp_path / "r.git")
    src = new_memory(tmp_path / "src")
    git(src.root, "push", "-q", str(remote), "main:refs/heads/master")
    repo = new_memory(tmp_path / "m")
    with pytest.raises(MemrepoError, match="no main"):
        sync.set_remote(repo, str(remote))
    assert sync.remote_url(repo) is None


# ----------------------------------------------------------------- credentials
@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("https://user:ghp_abcdefghijklmnop@github.com/o/r.git", "https://***@github.com/o/r.git"),
        ("https://x-access-token:ghs_secret123456@github.com/o/r", "https://***@github.com/o/r"),
        ("fatal: unable to access 'https://tok@host/r.git/': refused",
         "fatal: unable to access 'https://***@host/r.git/': refused"),
        ("x-access-token:abc@github.com/o/r", "***@github.com/o/r"),
        ("token ghp_abcdefghijklmnopqrstuvwxyz in text", "token *** in text"),
        ("/srv/memory.git", "/srv/memory.git"),
        ("git@github.com:o/r.git", "git@github.com:o/r.git"),
    ],
)
def test_redact(raw: str, shown: str) -> None:
    assert sync.redact(raw) == shown


def test_token_never_leaves_status_push_or_errors(tmp_path: Path) -> None:
    secret = "ghp_SuperSecretToken1234567890"
    url = f"https://user:{secret}@127.0.0.1:9/o/memory.git"
    repo = new_memory(tmp_path / "m")
    with pytest.raises(MemrepoError) as caught:
        sync.set_remote(repo, url)
    assert secret not in str(caught.value) and "https://***@127.0.0.1:9/o/memory.git" in str(caught.value)
    assert sync.remote_url(repo) is None

    repo.git.remotes.create("origin", url)
    st = sync.status(repo, fetch=True)
    assert st.url == "https://***@127.0.0.1:9/o/memory.git"
    assert st.fetch_error and secret not in st.fetch_error
    edit(repo, "system/human.md", append("x"))
    result = sync.push(repo)
    assert result.pushed is False and secret not in result.reason
    assert secret not in sync.unset_remote(repo)


def test_push_from_a_clone_that_is_only_behind_fast_forwards(pair) -> None:
    remote, a, b = pair
    edit(a, "system/human.md", append("A."))
    assert sync.push(a).pushed
    result = sync.push(b)
    assert result.pushed and result.replayed == 0
    assert b.head_sha() == remote_main(remote)
    assert "A." in (b.root / "system/human.md").read_text()


def test_only_main_is_synced(pair) -> None:
    _, a, _ = pair
    git(a.root, "checkout", "-q", "-b", "side")
    result = sync.push(a)
    assert result.pushed is False and "side" in result.reason
    with pytest.raises(MemrepoError, match="not main"):
        sync.sync(a)


def test_remote_that_refuses_the_push_keeps_the_commit_local(pair) -> None:
    remote, a, _ = pair
    hook = remote / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'memory is frozen' >&2\nexit 1\n")
    hook.chmod(0o755)
    sha = edit(a, "system/human.md", append("x"))
    result = sync.push(a)
    assert result.pushed is False
    assert result.reason == "the remote refused the push: remote rejected (pre-receive hook declined)"
    assert a.head_sha() == sha
    hook.unlink()
    assert sync.push(a).pushed


# ----------------------------------------------------------------- credentials on the first request
@pytest.mark.parametrize(
    ("url", "header"),
    [
        ("https://x-access-token:tok@github.com/o/r.git", "Authorization: Basic eC1hY2Nlc3MtdG9rZW46dG9r"),
        ("http://user:p%40ss@127.0.0.1:8080/o/r.git", "Authorization: Basic dXNlcjpwQHNz"),
        ("https://tokenonly@github.com/o/r.git", None),  # no password: git asks its helpers
        ("https://github.com/o/r.git", None),
        ("git@github.com:o/r.git", None),
        ("ssh://user:pw@host/r.git", None),
        ("/srv/memory.git", None),
        ("http://[::1:bad/r.git", None),
        (None, None),
    ],
)
def test_basic_auth_header(url: str | None, header: str | None) -> None:
    assert transport.basic_auth_header(url) == header


class _Recorder:
    """An HTTP server that answers 401 to everything and records each request's Authorization."""

    def __init__(self) -> None:
        seen: list[str | None] = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                seen.append(self.headers.get("Authorization"))
                self.send_response(401)
                self.send_header("WWW-Authenticate", 'Basic realm="test"')
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.seen = seen
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def recorder():
    server = _Recorder()
    yield server
    server.close()


def test_fetch_sends_the_urls_credentials_on_its_first_request(tmp_path: Path, recorder: _Recorder) -> None:
    repo = new_memory(tmp_path / "m")
    repo.git.remotes.create("origin", f"http://x-access-token:tok@127.0.0.1:{recorder.port}/o/memory.git")
    st = sync.status(repo, fetch=True)
    assert st.fetch_error  # the server refuses everything
    assert recorder.seen and recorder.seen[0] == "Basic eC1hY2Nlc3MtdG9rZW46dG9r"  # x-access-token:tok


def test_configured_headers_are_left_alone(tmp_path: Path, recorder: _Recorder) -> None:
    repo = new_memory(tmp_path / "m")
    repo.git.remotes.create("origin", f"http://x-access-token:tok@127.0.0.1:{recorder.port}/o/memory.git")
    repo.set_config("http.extraHeader", "X-Team: memory")
    sync.status(repo, fetch=True)
    assert recorder.seen and recorder.seen[0] is None  # git's own flow: ask, then answer the 401


# ----------------------------------------------------------------- in-process fetch (token URLs)
def _token_url(server, token: str, name: str) -> str:  # type: ignore[no-untyped-def]
    return server.url.replace("http://", f"http://x-access-token:{token}@") + f"/alice/{name}.git"


def test_token_urls_fetch_in_process_and_keep_what_was_known_on_failure(localhub, tmp_path: Path) -> None:
    token = localhub_token(localhub, "alice")
    for name in ("memory", "empty"):
        requests.post(f"{localhub.api_url}/user/repos", json={"name": name},
                      headers={"Authorization": f"token {token}"}, timeout=10).raise_for_status()
    a = new_memory(tmp_path / "a")
    sync.set_remote(a, _token_url(localhub, token, "memory"))
    git(tmp_path, "clone", "-q", _token_url(localhub, token, "memory"), str(tmp_path / "b"))
    b = MemoryRepo.open(tmp_path / "b")

    edit(a, "system/human.md", append("A."))
    assert sync.push(a).pushed
    st = sync.status(b, fetch=True)
    assert st.fetch_error is None and st.behind == 1
    assert b.resolve(sync.TRACKING_REF) == a.head_sha()

    known = b.resolve(sync.TRACKING_REF)
    b.set_config("remote.origin.url", f"http://x-access-token:{token}@127.0.0.1:9/alice/memory.git")
    st = sync.status(b, fetch=True)
    assert st.fetch_error and token not in st.fetch_error
    assert b.resolve(sync.TRACKING_REF) == known  # a failed fetch forgets nothing

    b.set_config("remote.origin.url", _token_url(localhub, token, "empty"))
    assert transport.fetch(b) == (None, None)  # a remote without main


def test_an_in_process_fetch_gives_up_on_a_server_that_never_answers(tmp_path: Path, monkeypatch) -> None:
    import socket

    monkeypatch.setattr(transport, "IDLE_TIMEOUT_MS", 1000)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)  # accepts connections, answers nothing
    try:
        repo = new_memory(tmp_path / "m")
        repo.git.remotes.create("origin", f"http://x-access-token:tok@127.0.0.1:{listener.getsockname()[1]}/o/m.git")
        remote, problem = transport.fetch(repo)
        assert remote is None and problem and "tok" not in problem
        # it gave up on libgit2's idle wait, bounded as set (by default libgit2 waits forever)
        assert "timed out" in problem and pygit2.option(pygit2.enums.Option.GET_SERVER_TIMEOUT) == 1000
    finally:
        listener.close()


def test_an_in_process_tls_failure_is_left_to_git(tmp_path: Path, recorder: _Recorder, monkeypatch) -> None:
    calls: list[tuple[str, ...]] = []
    real = transport.run_remote_git
    monkeypatch.setattr(transport, "run_remote_git", lambda repo, *args: calls.append(args) or real(repo, *args))
    repo = new_memory(tmp_path / "m")
    repo.git.remotes.create("origin", f"https://x-access-token:tok@127.0.0.1:{recorder.port}/o/memory.git")
    remote, problem = transport.fetch(repo)  # a plain-HTTP server: libgit2's TLS handshake fails
    assert remote is None and problem and "tok" not in problem
    assert [c[0] for c in calls] == ["fetch"]  # and git was asked too


def test_replay_merges_two_additions_to_one_list_as_the_integrator_does(pair) -> None:
    """Both sides add an item at the same place of a list: line by line that is a conflict;
    the markdown-aware merge keeps both items (the remote's first)."""
    remote, a, b = pair
    base = "---\ndescription: Team facts\n---\n# Facts\n- alpha\n- omega\n"
    edit(a, "reference/facts.md", lambda _: base)
    assert sync.push(a).pushed
    assert sync.sync(b).pulled == 1
    edit(a, "reference/facts.md", lambda t: t.replace("- alpha\n", "- alpha\n- from a\n"))
    assert sync.push(a).pushed
    edit(b, "reference/facts.md", lambda t: t.replace("- alpha\n", "- alpha\n- from b\n"), agent_id="b1")
    result = sync.push(b)
    assert result.pushed and result.set_aside == () and result.replayed == 1
    assert remote_file(remote, "reference/facts.md") == base.replace("- alpha\n", "- alpha\n- from a\n- from b\n")
